// The AI SDK's A2A provider (a2a-ai-provider, with ai 6, the versions its users have): generateText and streamText in a
// context the caller made (its README's way), the streamed text shown once. It fetches through the global fetch, so the
// token goes on there. Env: AGENT (the agent's URL, with the trailing slash), TOKEN.
import { a2a } from "a2a-ai-provider";
import { generateText, streamText } from "ai";

const { AGENT, TOKEN } = process.env;
const plainFetch = globalThis.fetch;
globalThis.fetch = (url, init = {}) => plainFetch(url, { ...init, headers: { ...Object.fromEntries(new Headers(init.headers)), authorization: `Bearer ${TOKEN}` } });
const model = a2a(new URL(".well-known/agent-card.json", AGENT).href);
const providerOptions = { a2a: { contextId: `ai-sdk-${crypto.randomUUID()}` } };

const generated = await generateText({ model, prompt: "Hello from the AI SDK", providerOptions });
console.log(`generateText: ${generated.text}`);
const streamed = streamText({ model, prompt: "Stream a reply in several pieces please", providerOptions });
let shown = "";
for await (const part of streamed.fullStream) if (part.type === "text-delta") shown += part.text;
const text = await streamed.text;
console.log(`streamText: ${shown === text ? "shown once" : `shown as ${JSON.stringify(shown)}`}: ${text}`);
