import { z } from "@hono/zod-openapi";

// Cutting text without breaking a character: an emoji is two UTF-16 units, and half of one is stored as U+FFFD.

/** The first `max` characters (code points) of text. */
export const firstCharacters = (text: string, max: number): string => (text.length <= max ? text : [...text.slice(0, max * 2)].slice(0, max).join(""));

/** The longest start of text within `units` UTF-16 units that does not end in half of a surrogate pair. */
export function withinUnits(text: string, units: number): string {
  if (text.length <= units) return text;
  if (units <= 0) return "";
  const code = text.charCodeAt(units - 1);
  return text.slice(0, code >= 0xd800 && code <= 0xdbff ? units - 1 : units);
}

// A schema's limits count characters (code points), so an emoji is one character, not two UTF-16 units.
/** A string of min to max characters. */
export const characters = (min: number, max: number, what: string) =>
  z
    .string()
    .refine((s) => {
      const n = [...s].length;
      return n >= min && n <= max;
    }, `${what} must be ${min} to ${max} characters`)
    .openapi({ minLength: min, maxLength: max });
