/**
 * @portcullis/udp — filled in by its issue.
 */
export {};
