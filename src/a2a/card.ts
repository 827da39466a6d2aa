import type { AgentCard } from "@a2a-js/sdk";
import { version } from "../../package.json";

/** The extensions every card names: optional, their data always sent (clients pass over metadata keys they do not know). */
export const QUESTION_EXTENSION = "urn:project-chat:a2a:question:v1";
export const USAGE_EXTENSION = "urn:project-chat:a2a:usage:v1";
export const EVENT_ID_EXTENSION = "urn:project-chat:a2a:event-id:v1";
export const EXTENSIONS = [
  {
    uri: QUESTION_EXTENSION,
    description: "Questions as text and as a typed Question (a data part); answers in words or as data.",
    required: false,
  },
  { uri: USAGE_EXTENSION, description: "What a task cost: credits and model tokens, in the task's metadata.", required: false },
  { uri: EVENT_ID_EXTENSION, description: "Each stream event carries the chat's event id: resume with Last-Event-ID, no gap, no repeat.", required: false },
];

const DESCRIPTION =
  "A Project Chat project's agent: it answers each message of the project's chats with a reply, which may ask a typed " +
  "question (text, choice, approval or connection) that the task waits on. Work costs the owner's credits, as each task says.";

const SCOPES = {
  "chat:read": "Read chats and tasks.",
  "chat:write": "Send, answer and cancel.",
};

/** Where a project's agent lives: `{PUBLIC_URL}/a2a/projects/{projectId}`. */
const agentUrl = (publicOrigin: string, projectId: string) => `${publicOrigin}/a2a/projects/${projectId}`;

/**
 * The A2A 1.0 card of a project's agent (ProtoJSON names), the same for any project id; `projectName` only in the extended
 * card. Push notifications are offered where their secrets can be sealed (WEBHOOK_KEY).
 */
export function agentCard(publicOrigin: string, projectId: string, pushNotifications: boolean, projectName?: string) {
  const url = agentUrl(publicOrigin, projectId);
  return {
    name: projectName ?? "Project chat agent",
    description: projectName ? `The agent of the project "${projectName}". ${DESCRIPTION}` : DESCRIPTION,
    supportedInterfaces: [
      { url, protocolBinding: "JSONRPC", protocolVersion: "1.0" },
      { url: `${url}/rest`, protocolBinding: "HTTP+JSON", protocolVersion: "1.0" },
      { url, protocolBinding: "JSONRPC", protocolVersion: "0.3" },
    ],
    provider: { organization: "Project Chat", url: publicOrigin },
    version,
    capabilities: { streaming: true, pushNotifications, extensions: EXTENSIONS, extendedAgentCard: true },
    securitySchemes: {
      bearer: {
        httpAuthSecurityScheme: { scheme: "Bearer", bearerFormat: "pct_ personal API token", description: "A personal API token of the account (chat:read, chat:write)." },
      },
      oauth2: {
        oauth2SecurityScheme: {
          flows: {
            authorizationCode: {
              authorizationUrl: `${publicOrigin}/oauth/authorize`,
              tokenUrl: `${publicOrigin}/oauth/token`,
              refreshUrl: `${publicOrigin}/oauth/token`,
              scopes: SCOPES,
              pkceRequired: true,
            },
          },
          oauth2MetadataUrl: `${publicOrigin}/.well-known/oauth-authorization-server`,
        },
      },
    },
    securityRequirements: [{ schemes: { bearer: { list: [] as string[] } } }, { schemes: { oauth2: { list: Object.keys(SCOPES) } } }] as {
      schemes: Record<string, { list: string[] }>;
    }[],
    defaultInputModes: ["text/plain", "application/json"],
    defaultOutputModes: ["text/plain"],
    skills: [
      {
        id: "project-chat",
        name: "Work on the project",
        description: "Takes a request in plain words and replies; asks a typed question when it needs a decision.",
        tags: ["chat", "project"],
        examples: ["Summarise this week's changes.", "Draft a reply to the last customer message."],
      },
    ],
  };
}

/**
 * The extended card (naming the project) in the SDK's own shape, which its transport serialises: the same card, its
 * oneofs held as the SDK holds them ({ $case, value }), its other fields at their defaults.
 */
export function extendedAgentCard(publicOrigin: string, projectId: string, pushNotifications: boolean, projectName: string): AgentCard {
  const card = agentCard(publicOrigin, projectId, pushNotifications, projectName);
  const bearer = card.securitySchemes.bearer.httpAuthSecurityScheme;
  const { flows, oauth2MetadataUrl } = card.securitySchemes.oauth2.oauth2SecurityScheme;
  return {
    ...card,
    supportedInterfaces: card.supportedInterfaces.map((i) => ({ ...i, tenant: "" })),
    capabilities: { ...card.capabilities, extensions: EXTENSIONS.map((e) => ({ ...e, params: undefined })) },
    securitySchemes: {
      bearer: { scheme: { $case: "httpAuthSecurityScheme", value: bearer } },
      oauth2: {
        scheme: { $case: "oauth2SecurityScheme", value: { description: "", flows: { flow: { $case: "authorizationCode", value: flows.authorizationCode } }, oauth2MetadataUrl } },
      },
    },
    skills: card.skills.map((skill) => ({ ...skill, inputModes: [], outputModes: [], securityRequirements: [] })),
    signatures: [],
  };
}

/**
 * The card for a client that names no A2A-Version: the whole v1.0 card (a v1.0 client that sends no header, as the TCK
 * and a2a-python 1.x, reads a valid one), plus the fields a v0.3 client reads, which a v1.0 reader ignores.
 */
export function unversionedAgentCard(publicOrigin: string, projectId: string, pushNotifications: boolean): Record<string, unknown> {
  const legacy = legacyAgentCard(publicOrigin, projectId, pushNotifications);
  const { protocolVersion, url, preferredTransport, additionalInterfaces, supportsAuthenticatedExtendedCard, security } = legacy;
  return { ...agentCard(publicOrigin, projectId, pushNotifications), protocolVersion, url, preferredTransport, additionalInterfaces, supportsAuthenticatedExtendedCard, security };
}

/** The same card in the v0.3 shape, with the 1.0 interfaces beside it (what a client asking with A2A-Version: 0.3 reads). */
export function legacyAgentCard(publicOrigin: string, projectId: string, pushNotifications: boolean): Record<string, unknown> {
  const { name, description, supportedInterfaces, provider, version, capabilities, securitySchemes, defaultInputModes, defaultOutputModes, skills } = agentCard(
    publicOrigin,
    projectId,
    pushNotifications,
  );
  const url = agentUrl(publicOrigin, projectId);
  const { flows, oauth2MetadataUrl } = securitySchemes.oauth2.oauth2SecurityScheme;
  const { pkceRequired: _, ...authorizationCode } = flows.authorizationCode;
  return {
    protocolVersion: "0.3.0",
    name,
    description,
    url,
    preferredTransport: "JSONRPC",
    additionalInterfaces: [{ url, transport: "JSONRPC" }],
    supportedInterfaces,
    provider,
    version,
    capabilities: { streaming: capabilities.streaming, pushNotifications: capabilities.pushNotifications, extensions: EXTENSIONS },
    securitySchemes: {
      bearer: { type: "http", scheme: "bearer", bearerFormat: securitySchemes.bearer.httpAuthSecurityScheme.bearerFormat },
      oauth2: { type: "oauth2", flows: { authorizationCode }, oauth2MetadataUrl },
    },
    security: [{ bearer: [] }, { oauth2: Object.keys(SCOPES) }],
    supportsAuthenticatedExtendedCard: true,
    defaultInputModes,
    defaultOutputModes,
    skills,
  };
}
