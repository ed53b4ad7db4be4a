/**
 * @portcullis/tcp — filled in by its issue.
 */
export {};
