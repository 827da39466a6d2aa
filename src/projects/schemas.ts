import { z } from "@hono/zod-openapi";
import { ROLES } from "./roles";

export const ProjectSummary = z
  .object({
    id: z.uuid(),
    name: z.string(),
    role: z.enum(ROLES).openapi({ description: "The token's account's role: owner and editor read and write, viewer only reads" }),
  })
  .openapi("ProjectSummary");

export const ProjectList = z.object({ items: z.array(ProjectSummary) }).openapi("ProjectList");
export type ProjectList = z.infer<typeof ProjectList>;

// The list takes no parameters; an unknown one is a 400 like anywhere else.
export const ListProjectsQuery = z.strictObject({});
