/**
 * A model's arguments as an object: parsed from JSON text if need be, or why they are not one
 * (the message the model reads back).
 *
 * @example argsObject('{"city":"Paris"}') // { city: 'Paris' }
 */
export function argsObject(raw: unknown): Record<string, unknown> | string {
  let value = raw;
  if (typeof raw === 'string') {
    if (raw.trim() === '') return {};
    try {
      value = JSON.parse(raw);
    } catch (error) {
      return `the arguments are not valid JSON (${(error as Error).message})`;
    }
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return `the arguments must be a JSON object, got ${value === null ? 'null' : Array.isArray(value) ? 'an array' : typeof value}`;
  }
  return value as Record<string, unknown>;
}
