/** A time in milliseconds as the API and storage write it (ISO 8601, UTC). */
export const iso = (ms: number): string => new Date(ms).toISOString();
