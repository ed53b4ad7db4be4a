/**
 * @portcullis/core/testing — helpers for an application's tests, never for
 * production code.
 */
export { storeUnavailable } from './store/cache-store.js';
