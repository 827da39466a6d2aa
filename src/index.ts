import { createApp } from "./app";
import type { Env } from "./env";

const app = createApp();

export { SignInThrottle } from "./auth/sign-in-throttle";
export { TokenGate } from "./auth/token-gate";
export { ChatRoom } from "./chats/chat-room";
export { ProjectChats } from "./chats/project-chats";
export { AccountLedger } from "./credits/account-ledger";

export default { fetch: app.fetch } satisfies ExportedHandler<Env>;
