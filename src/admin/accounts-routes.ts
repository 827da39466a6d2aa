import { createRoute, z } from "@hono/zod-openapi";
import { createAccount, listAccounts, updateAccount } from "../auth/accounts";
import { Email } from "../auth/schemas";
import { createRouter, jsonBody, jsonResponse, problems } from "../http/router";
import { forgetMemberships } from "../projects/access";
import { ROLES, createProject, removeMember, setMember, setProjectStatus } from "../projects/store";

export const adminAccountRoutes = createRouter();
const security = [{ adminBearer: [] }];
const credits = z.number().int().min(0).max(Number.MAX_SAFE_INTEGER);
const password = z.string().min(8).max(1024);
const Account = z.object({ id: z.uuid(), email: z.string(), credits: z.number().int() }).openapi("AdminAccount");
const Project = z.object({ id: z.uuid(), name: z.string(), ownerAccountId: z.uuid(), status: z.enum(["active", "suspended"]) }).openapi("AdminProject");
const Member = z.object({ projectId: z.uuid(), accountId: z.uuid(), role: z.enum(ROLES) }).openapi("AdminMember");
const AccountList = z.object({ items: z.array(Account) }).openapi("AdminAccountList");
const AccountsQuery = z.strictObject({
  email: Email.optional().openapi({ description: "Only the account with this email (case-insensitive)" }),
  after: z.string().max(320).optional().openapi({ description: "The last email of the previous page: the list continues after it" }),
  limit: z.coerce.number().int().min(1).max(1000).default(100).openapi({ type: "integer", minimum: 1, maximum: 1000, default: 100 }),
});
const idParam = z.object({ id: z.uuid() });
const memberParams = z.object({ id: z.uuid(), accountId: z.uuid() });

adminAccountRoutes.openapi(
  createRoute({
    method: "post", path: "/accounts", operationId: "createAccount", tags: ["Admin"], summary: "Create an account", security,
    request: { body: jsonBody(z.strictObject({ email: Email, password, credits: credits.default(0) })) },
    responses: { 201: jsonResponse(Account, "Created"), ...problems(400, 401, 404, 409) },
  }),
  async (c) => c.json(await createAccount(c.env.DB, c.req.valid("json")), 201),
);

adminAccountRoutes.openapi(
  createRoute({
    method: "get", path: "/accounts", operationId: "listAccounts", tags: ["Admin"], summary: "Find accounts: by email, or all of them in email order", security,
    request: { query: AccountsQuery },
    responses: { 200: jsonResponse(AccountList, "Accounts in email order"), ...problems(400, 401, 404) },
  }),
  async (c) => c.json({ items: await listAccounts(c.env.DB, c.req.valid("query")) }, 200),
);

adminAccountRoutes.openapi(
  createRoute({
    method: "patch", path: "/accounts/{id}", operationId: "updateAccount", tags: ["Admin"], summary: "Set an account's credits or password", security,
    request: { params: idParam, body: jsonBody(z.strictObject({ credits: credits.optional(), password: password.optional() })) },
    responses: { 200: jsonResponse(Account, "Updated"), ...problems(400, 401, 404) },
  }),
  async (c) => c.json(await updateAccount(c.env.DB, c.req.valid("param").id, c.req.valid("json")), 200),
);

adminAccountRoutes.openapi(
  createRoute({
    method: "post", path: "/projects", operationId: "createProject", tags: ["Admin"], summary: "Create a project owned by an account", security,
    request: { body: jsonBody(z.strictObject({ name: z.string().trim().min(1).max(200), ownerAccountId: z.uuid(), id: z.uuid().optional() })) },
    responses: { 201: jsonResponse(Project, "Created"), ...problems(400, 401, 404, 409) },
  }),
  async (c) => c.json(await createProject(c.env.DB, c.req.valid("json")), 201),
);

adminAccountRoutes.openapi(
  createRoute({
    method: "patch", path: "/projects/{id}", operationId: "setProjectStatus", tags: ["Admin"], summary: "Suspend or reactivate a project", security,
    request: { params: idParam, body: jsonBody(z.strictObject({ status: z.enum(["active", "suspended"]) })) },
    responses: { 200: jsonResponse(Project, "Updated"), ...problems(400, 401, 404) },
  }),
  async (c) => {
    const project = await setProjectStatus(c.env.DB, c.req.valid("param").id, c.req.valid("json").status);
    forgetMemberships();
    return c.json(project, 200);
  },
);

adminAccountRoutes.openapi(
  createRoute({
    method: "put", path: "/projects/{id}/members/{accountId}", operationId: "setMember", tags: ["Admin"], summary: "Add a member or change their role", security,
    description: "The project owner's own role cannot be changed here: that answers 409 conflict.",
    request: { params: memberParams, body: jsonBody(z.strictObject({ role: z.enum(ROLES) })) },
    responses: { 200: jsonResponse(Member, "The membership"), ...problems(400, 401, 404, 409) },
  }),
  async (c) => {
    const { id, accountId } = c.req.valid("param");
    const member = await setMember(c.env.DB, id, accountId, c.req.valid("json").role);
    forgetMemberships();
    return c.json(member, 200);
  },
);

adminAccountRoutes.openapi(
  createRoute({
    method: "delete", path: "/projects/{id}/members/{accountId}", operationId: "removeMember", tags: ["Admin"], summary: "Remove a member", security,
    request: { params: memberParams },
    responses: { 204: { description: "Removed" }, ...problems(401, 404, 409) },
  }),
  async (c) => {
    const { id, accountId } = c.req.valid("param");
    await removeMember(c.env.DB, id, accountId);
    forgetMemberships();
    return c.body(null, 204);
  },
);
