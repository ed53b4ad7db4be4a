/**
 * The reflect-metadata keys every portcullis decorator writes under. Decorators
 * only record; {@link readShieldPlan} and `readPortalPlan` are the only readers.
 */

/** On a class (constructor) or a method (prototype + key): the one `ShieldAuth` class. */
export const SHIELD_METADATA = Symbol.for('portcullis:shield');

/** On a class or a method: the `@Authorize` requirements declared there, in order. */
export const AUTHORIZE_METADATA = Symbol.for('portcullis:authorize');

/** On a class (constructor): the portal path. */
export const PORTAL_METADATA = Symbol.for('portcullis:portal');

/** On a method (prototype + key): the gate name. */
export const GATE_METADATA = Symbol.for('portcullis:gate');

/** On a prototype (own only): the keys of the methods that prototype declared as gates. */
export const GATE_METHODS_METADATA = Symbol.for('portcullis:gate-methods');

/** On a class or a method: `true` where `@AllowAnonymous` was declared. */
export const ANONYMOUS_METADATA = Symbol.for('portcullis:allow-anonymous');

/** On a class or a method: the `@RateLimit` rule declared there. */
export const RATE_LIMIT_METADATA = Symbol.for('portcullis:rate-limit');

/** On a class or a method: `true` where `@NeverShed` was declared. */
export const NEVER_SHED_METADATA = Symbol.for('portcullis:never-shed');
