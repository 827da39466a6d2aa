import { createRoute, z } from "@hono/zod-openapi";
import { writeSeenHere } from "../db/sessions";
import { ApiError, invalidRequest, notFound } from "../http/problem";
import { createRouter, jsonBody, jsonResponse, problems } from "../http/router";
import { forgetMemberships } from "../projects/access";
import { PROJECT_STATUSES, ROLES } from "../projects/roles";
import { createProject, removeMember, setMember, setProjectStatus } from "../projects/store";
import { adminSecurity } from "./guard";
import { log } from "../log";

export const adminProjectRoutes = createRouter();
const Project = z.object({ id: z.uuid(), name: z.string(), ownerAccountId: z.uuid(), status: z.enum(PROJECT_STATUSES) }).openapi("AdminProject");
const Member = z.object({ projectId: z.uuid(), accountId: z.uuid(), role: z.enum(ROLES) }).openapi("AdminMember");
const memberParams = z.object({ id: z.uuid(), accountId: z.uuid() });
const noSuchProject = () => notFound("No project has this id.");

adminProjectRoutes.openapi(
  createRoute({
    method: "post",
    path: "/projects",
    operationId: "createProject",
    tags: ["Admin"],
    summary: "Create a project owned by an account",
    security: adminSecurity,
    request: { body: jsonBody(z.strictObject({ name: z.string().trim().min(1).max(200), ownerAccountId: z.uuid(), id: z.uuid().optional() })) },
    responses: { 201: jsonResponse(Project, "Created"), ...problems(400, 401, 404, 409) },
  }),
  async (c) => {
    const outcome = await createProject(c.env.DB, c.req.valid("json"));
    switch (outcome.kind) {
      case "id_taken":
        throw new ApiError(409, "conflict", "A project with this id already exists.");
      case "no_such_owner":
        throw invalidRequest("ownerAccountId does not name an account.", [{ path: "ownerAccountId", message: "no such account" }]);
    }
    try {
      await c.env.PROJECT_CHATS.getByName(outcome.project.id).open();
    } catch (error) {
      // Not lost: a chat list that starts unopened reads the (empty) D1 list once.
      log.warn("chat_list_open_failed", { projectId: outcome.project.id }, error);
    }
    return c.json(outcome.project, 201);
  },
);

// Membership is cached per isolate for a few seconds; each change below drops this isolate's copy at once,
// and this isolate's later reads start from the change's bookmark, so a lagging replica cannot bring it back.
adminProjectRoutes.openapi(
  createRoute({
    method: "patch",
    path: "/projects/{id}",
    operationId: "setProjectStatus",
    tags: ["Admin"],
    summary: "Suspend or reactivate a project",
    security: adminSecurity,
    description: "A suspended project answers 404 to its members, and its chats' queued messages wait until it is active again.",
    request: { params: z.object({ id: z.uuid() }), body: jsonBody(z.strictObject({ status: z.enum(PROJECT_STATUSES) })) },
    responses: { 200: jsonResponse(Project, "Updated"), ...problems(400, 401, 404) },
  }),
  async (c) => {
    const project = await writeSeenHere(c.env.DB, (db) => setProjectStatus(db, c.req.valid("param").id, c.req.valid("json").status));
    if (!project) throw noSuchProject();
    forgetMemberships();
    return c.json(project, 200);
  },
);

adminProjectRoutes.openapi(
  createRoute({
    method: "put",
    path: "/projects/{id}/members/{accountId}",
    operationId: "setMember",
    tags: ["Admin"],
    summary: "Add a member or change their role",
    security: adminSecurity,
    description: "The project owner's own role cannot be changed here: that answers 409 conflict.",
    request: { params: memberParams, body: jsonBody(z.strictObject({ role: z.enum(ROLES) })) },
    responses: { 200: jsonResponse(Member, "The membership"), ...problems(400, 401, 404, 409) },
  }),
  async (c) => {
    const { id, accountId } = c.req.valid("param");
    const { role } = c.req.valid("json");
    const outcome = await writeSeenHere(c.env.DB, (db) => setMember(db, id, accountId, role));
    if (outcome === "owner_keeps_role")
      throw new ApiError(409, "conflict", `This account owns the project; its role stays owner. Give ${role} to another account, or transfer the project first.`);
    if (outcome === "not_found") throw notFound("No such project or account.");
    forgetMemberships();
    return c.json({ projectId: id, accountId, role }, 200);
  },
);

adminProjectRoutes.openapi(
  createRoute({
    method: "delete",
    path: "/projects/{id}/members/{accountId}",
    operationId: "removeMember",
    tags: ["Admin"],
    summary: "Remove a member",
    security: adminSecurity,
    request: { params: memberParams },
    responses: { 204: { description: "Removed" }, ...problems(401, 404, 409) },
  }),
  async (c) => {
    const { id, accountId } = c.req.valid("param");
    const outcome = await writeSeenHere(c.env.DB, (db) => removeMember(db, id, accountId));
    if (outcome === "owner_stays") throw new ApiError(409, "conflict", "The project's owner stays a member; transfer the project first.");
    if (outcome === "not_member") throw notFound("This account is not a member of this project.");
    forgetMemberships();
    return c.body(null, 204);
  },
);
