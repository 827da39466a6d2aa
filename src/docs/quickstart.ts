// The quickstart's commands: the front door (/) shows them, the README's first block is the same commands
// (scripts/test/quickstart.test.ts compares them) and npm run readme-check runs both against npm run dev.
// Nothing here depends on the day or the machine: keys and dates come from node, which the README asks for anyway.

const CHATS = "$BASE/v1/projects/$PROJECT/chats";
const AS_TOKEN = `-H "authorization: Bearer $TOKEN"`;

/** From a clone running npm run dev: a token of the demo account, with BASE and PROJECT, exported. */
export const LOCAL_TOKEN = `eval "$(npm run -s token -- --shell)"`;

/** By hand, as on any deployment: sign in, create a token valid 30 days (shown once), take the first project. */
export function tokenByHand(base: string, email: string, password: string): string {
  const credentials = JSON.stringify({ email, password });
  return `BASE=${base}
SESSION=$(curl -s $BASE/auth/token -H 'content-type: application/json' \\
  -d '${credentials}' | jq -er '.token // error(tostring)')
EXPIRES=$(node -e 'console.log(new Date(Date.now() + 30 * 86400000).toISOString())')
TOKEN=$(curl -s $BASE/auth/api-tokens -H "authorization: Bearer $SESSION" -H 'content-type: application/json' \\
  -d "{\\"name\\":\\"quickstart\\",\\"scopes\\":[\\"chat:read\\",\\"chat:write\\"],\\"expiresAt\\":\\"$EXPIRES\\"}" | jq -er '.token // error(tostring)')
PROJECT=$(curl -s $BASE/v1/projects ${AS_TOKEN} | jq -er '.items[0].id // error(tostring)')`;
}

/** A chat, and a message to it with a key of its own: the answer is 202 and the agent starts. */
export const SEND = `CHAT=$(curl -s ${CHATS} ${AS_TOKEN} \\
  -H 'content-type: application/json' -d '{"title":"Landing page"}' | jq -er '.id // error(tostring)')
curl -s -w '\\n' ${CHATS}/$CHAT/messages ${AS_TOKEN} -H 'content-type: application/json' \\
  -H "idempotency-key: $(node -e 'console.log(crypto.randomUUID())')" -d '{"content":"Build me a landing page"}'`;

/** The chat's events from its first, so the whole task shows even if it ended before; sed stops at the finished reply. */
export const FOLLOW = `curl -sN "${CHATS}/$CHAT/events?after=0" ${AS_TOKEN} | sed '/"status":"success"/q'`;
