/**
 * @portcullis/ws — filled in by its issue.
 */
export {};
