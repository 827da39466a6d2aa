/** A time in milliseconds as the API and storage write it (ISO 8601, UTC). */
export const iso = (ms: number): string => new Date(ms).toISOString();
/** A day in milliseconds (a UTC day: no leap seconds in ECMAScript time). */
export const DAY_MS = 86_400_000;
