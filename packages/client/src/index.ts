/**
 * @portcullis/client — filled in by its issue.
 */
export {};
