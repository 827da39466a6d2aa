import type { D1Migration } from "cloudflare:test";
import type { FaultyJobChatRoom } from "./doubles/faulty-job-chat-room";
import type { HeldModelChatRoom } from "./doubles/held-model-chat-room";

declare global {
  namespace Cloudflare {
    interface Env {
      TEST_MIGRATIONS: D1Migration[];
      // Test subclasses of the service's Durable Objects (test/worker.ts).
      FAULTY_CHAT_ROOM: DurableObjectNamespace<FaultyJobChatRoom>;
      HELD_MODEL_CHAT_ROOM: DurableObjectNamespace<HeldModelChatRoom>;
    }
  }
}
