import { describe, expect, it } from "vitest";
import { decryptSecret, encryptSecret, newWebhookSecret } from "../../src/webhooks/secrets";
import { signWebhook, webhookIdOf } from "../../src/webhooks/signature";

describe("webhook signatures (Standard Webhooks)", () => {
  it("match the specification's test vector", async () => {
    // From the Standard Webhooks specification's example.
    const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
    const signature = await signWebhook(secret, "msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265330, '{"test": 2432232314}');
    expect(signature).toBe("v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=");
  });

  it("give one webhook-id per event and endpoint, whatever the attempt", async () => {
    const id = await webhookIdOf("event-1", "endpoint-1");
    expect(await webhookIdOf("event-1", "endpoint-1")).toBe(id);
    expect(await webhookIdOf("event-1", "endpoint-2")).not.toBe(id);
    expect(id).toMatch(/^msg_[A-Za-z0-9_-]{32}$/);
  });

  it("keep a secret sealed with WEBHOOK_KEY, readable only with it", async () => {
    const secret = newWebhookSecret();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    const sealed = await encryptSecret(secret, "key-one");
    expect(sealed).not.toContain(secret.slice(6));
    expect(await encryptSecret(secret, "key-one")).not.toBe(sealed);
    expect(await decryptSecret(sealed, "key-one")).toBe(secret);
    await expect(decryptSecret(sealed, "key-two")).rejects.toThrow();
  });
});
