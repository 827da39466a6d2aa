/** A member's role: owners and editors read and write, viewers only read. */
export const ROLES = ["owner", "editor", "viewer"] as const;
export type Role = (typeof ROLES)[number];

/** A suspended project answers 404 to its members and holds its queued work. */
export const PROJECT_STATUSES = ["active", "suspended"] as const;
export type ProjectStatus = (typeof PROJECT_STATUSES)[number];
