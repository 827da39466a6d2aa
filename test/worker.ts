// The Worker the tests run: the service's own entry, plus the test subclasses its Durable Object bindings use in tests.
export * from "../src/index";
export { default } from "../src/index";
export { FaultyJobChatRoom } from "./doubles/faulty-job-chat-room";
export { HeldModelChatRoom } from "./doubles/held-model-chat-room";
export { TestChatRoom } from "./doubles/test-chat-room";
export { TestProjectWebhooks } from "./doubles/test-project-webhooks";
