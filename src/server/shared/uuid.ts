// The platform's ids are uuids; this is the one check of their text before it reaches PostgreSQL,
// whose `uuid` cast fails on anything else.
const CANONICAL_UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function isUuid(text: string): boolean {
  return CANONICAL_UUID.test(text);
}

/** A uuid as PostgreSQL writes one: canonical and in lowercase. */
export function isLowercaseUuid(text: string): boolean {
  return CANONICAL_UUID.test(text) && !/[A-F]/.test(text);
}
