/**
 * @portcullis/express — filled in by its issue.
 */
export {};
