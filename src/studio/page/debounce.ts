// Filters apply as people type, a moment after the last key: one request per pause, not per key.
import { useEffect, useState } from 'preact/hooks';

/** `value`, once it has stayed the same for `delayMs`. */
export function useDebounced<T>(value: T, delayMs: number): T {
  const [settled, setSettled] = useState(value);
  useEffect(() => {
    const timer = setTimeout(() => setSettled(value), delayMs);
    return () => clearTimeout(timer);
  }, [value, delayMs]);
  return settled;
}
