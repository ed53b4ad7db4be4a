/**
 * Reading the JSON body of an `/auth` request: it must be a JSON object.
 */
import { PortcullisError } from '@portcullis/core';
import type { Request } from 'express';

/**
 * The request's JSON object body, or `PortcullisError('invalid_request')` when
 * there is none (wrong Content-Type, empty) or it is an array.
 *
 * @example
 * ```ts
 * const { refreshToken } = jsonObjectBody(req);
 * ```
 */
export function jsonObjectBody(req: Request): Record<string, unknown> {
  const body: unknown = req.body;
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new PortcullisError('invalid_request', 'the body must be a JSON object sent with Content-Type: application/json');
  }
  return body as Record<string, unknown>;
}

/** A required non-empty string field, or `invalid_request` naming it. */
export function requiredString(body: Record<string, unknown>, field: string): string {
  const value = Object.hasOwn(body, field) ? body[field] : undefined;
  if (typeof value !== 'string' || value.length === 0) throw new PortcullisError('invalid_request', `${field} must be a non-empty string`);
  return value;
}
