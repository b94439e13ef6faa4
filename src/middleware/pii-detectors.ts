// The PII redaction's built-in detectors: a pattern finds candidates, a check (a checksum, a
// digit count, an entropy) keeps the real ones. Held to the same rule as the middleware: the
// public API only.
import { isIP } from 'node:net';

/**
 * A built-in detector's name. `highEntropy` (long random-looking tokens) is not on by default:
 * base64 data and ids look like that too.
 *
 * @example piiRedactionMiddleware({ detectors: ['email', 'creditCard'] })
 *
 * @inline
 */
export type PiiDetectorName = 'email' | 'phone' | 'creditCard' | 'iban' | 'ip' | 'secret' | 'highEntropy';

/**
 * A span of text a custom detector found: `[start, end)`.
 *
 * @example detect: (text) => [...text.matchAll(/\bT-\d{5}\b/g)].map((m): PiiMatch => ({ start: m.index, end: m.index + m[0].length }))
 */
export interface PiiMatch {
  start: number;
  end: number;
}

/** The built-in detectors, by name. */
export const BUILT_IN = ['email', 'phone', 'creditCard', 'iban', 'ip', 'secret', 'highEntropy'] as const satisfies readonly PiiDetectorName[];

const digits = (value: string) => value.replace(/\D/g, '');

/** Luhn's check digit test, as card numbers carry it. */
function luhn(number: string): boolean {
  let sum = 0;
  for (let i = 0; i < number.length; i++) {
    let d = number.charCodeAt(number.length - 1 - i) - 48;
    if (i % 2 === 1 && (d *= 2) > 9) d -= 9;
    sum += d;
  }
  return sum % 10 === 0;
}

/** ISO 13616's check: the IBAN, rearranged and read as a number, is 1 modulo 97. */
function ibanValid(value: string): boolean {
  const iban = value.replace(/ /g, '');
  if (iban.length < 15 || iban.length > 34) return false;
  let rest = 0;
  for (const ch of iban.slice(4) + iban.slice(0, 4)) {
    const n = ch >= 'A' ? ch.charCodeAt(0) - 55 : ch.charCodeAt(0) - 48;
    rest = (n > 9 ? rest * 100 + n : rest * 10 + n) % 97;
  }
  return rest === 1;
}

/** Bits per character of `value`'s own alphabet. */
function entropy(value: string): number {
  const counts = new Map<string, number>();
  for (const ch of value) counts.set(ch, (counts.get(ch) ?? 0) + 1);
  let bits = 0;
  for (const n of counts.values()) bits -= (n / value.length) * Math.log2(n / value.length);
  return bits;
}

/** A detector, built-in or the user's, as the redactor runs it. */
export interface Detector {
  name: string;
  pattern: RegExp;
  /** Whether a match of the pattern is really one (a checksum, a digit count). */
  valid?: (value: string) => boolean;
  /** The form hashed, so spellings of one value share a token. */
  normal?: (value: string) => string;
  detect?: (text: string) => readonly (PiiMatch | string)[];
}

// Patterns find candidates; `valid` keeps the real ones. Earlier detectors win overlaps.
export const DETECTORS: Record<PiiDetectorName, Detector> = {
  secret: {
    name: 'secret',
    pattern: /-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z ]*PRIVATE KEY-----|\bsk-(?:[A-Za-z]+-)?[A-Za-z0-9_-]{20,}|\b(?:AKIA|ASIA)[0-9A-Z]{16}\b|\bgh[pousr]_[A-Za-z0-9]{36,}\b|\bgithub_pat_[A-Za-z0-9_]{22,}\b|\bxox[abprs]-[A-Za-z0-9-]{10,}|\bAIza[0-9A-Za-z_-]{35}\b|\beyJ[\w-]{8,}\.eyJ[\w-]{8,}\.[\w-]{8,}/g,
  },
  email: { name: 'email', pattern: /[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}/g, normal: (v) => v.toLowerCase() },
  creditCard: { name: 'creditCard', pattern: /(?<![\d-])\d(?:[ -]?\d){12,18}(?![\d-])/g, valid: (v) => luhn(digits(v)), normal: digits },
  iban: { name: 'iban', pattern: /\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]){11,30}\b/g, valid: ibanValid, normal: (v) => v.replace(/ /g, '') },
  ip: {
    name: 'ip',
    pattern: /(?<![\w.:])(?:\d{1,3}(?:\.\d{1,3}){3}|[A-Fa-f0-9]{0,4}(?::[A-Fa-f0-9]{0,4}){2,7})(?![\w.:])/g,
    valid: (v) => isIP(v) !== 0 && v.includes(v.includes('.') ? '.' : ':'),
    normal: (v) => v.toLowerCase(),
  },
  phone: {
    name: 'phone',
    pattern: /(?<![\w+]|\d[.-])(?:\+\d{1,3}[ .-]?)?(?:\(\d{1,4}\)[ .-]?)?\d{2,4}(?:[ .-]\d{2,4}){1,4}(?!\w|[.-]\d)|(?<![\w+])\+\d{8,15}\b/g,
    valid: (v) => { const n = digits(v).length; return n >= (v.startsWith('+') ? 8 : 9) && n <= 15; },
    normal: (v) => (v.startsWith('+') ? '+' : '') + digits(v),
  },
  highEntropy: {
    name: 'highEntropy',
    pattern: /(?<![\w+/=-])[A-Za-z0-9+/_=-]{32,}(?![\w+/=-])/g,
    valid: (v) => /[a-z]/.test(v) && /[A-Z]/.test(v) && /\d/.test(v) && entropy(v) >= 4.2,
  },
};
/** The order overlapping matches are settled in: an earlier detector wins. */
export const ORDER: PiiDetectorName[] = ['secret', 'email', 'creditCard', 'iban', 'ip', 'phone', 'highEntropy'];
