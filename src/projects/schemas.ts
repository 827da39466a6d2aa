import { z } from "@hono/zod-openapi";
import { PathId } from "../ids";
import { ROLES } from "./roles";

const ProjectSummary = z
  .object({
    id: z.uuid(),
    name: z.string(),
    role: z.enum(ROLES).openapi({ description: "The token's account's role: owner and editor read and write, viewer only reads" }),
  })
  .openapi("ProjectSummary");

export const ProjectList = z.object({ items: z.array(ProjectSummary) }).openapi("ProjectList");
export type ProjectList = z.infer<typeof ProjectList>;

// Local development's demo project (npm run dev seeds it), the example of every project id in the document.
export const DEMO_PROJECT_ID = "00000000-0000-4000-8000-000000000001";
export const ProjectId = PathId.openapi({ example: DEMO_PROJECT_ID });
export const ProjectParams = z.object({ projectId: ProjectId });

// The list takes no parameters; an unknown one is a 400 like anywhere else.
export const ListProjectsQuery = z.strictObject({});
