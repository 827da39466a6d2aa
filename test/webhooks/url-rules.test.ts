import { describe, expect, it } from "vitest";
import { webhookUrlProblem } from "../../src/webhooks/url-rules";

describe("where a webhook may point", () => {
  it.each([
    "https://example.com/hook",
    "https://hooks.example.com./in",
    "https://local.example.com/hook",
    "https://internal.example.org/hook",
    "https://93.184.216.34/hook",
    "https://[2606:4700::1111]/hook",
    "https://example.com:8443/hooks?project=1",
  ])("accepts %s", (url) => expect(webhookUrlProblem(url, false)).toBeNull());

  it.each([
    ["ftp://example.com/hook", "https only"],
    ["http://example.com/hook", "https only"],
    ["http://localhost:8080/hook", "https only"],
    ["https://user:pw@example.com/hook", "no user name"],
    ["https://example.com/hook#part", "no fragment"],
    ["not a url", "not an absolute URL"],
    [`https://example.com/${"x".repeat(2_000)}`, "at most 2000"],
    ["https://10.0.0.7/hook", "reserved"],
    ["https://172.20.1.1/hook", "reserved"],
    ["https://192.168.1.1/hook", "reserved"],
    ["https://127.0.0.1/hook", "reserved"],
    ["https://169.254.169.254/latest", "reserved"],
    ["https://100.64.0.1/hook", "reserved"],
    ["https://0.0.0.0/hook", "reserved"],
    ["https://224.0.0.1/hook", "reserved"],
    ["https://[::1]/hook", "reserved"],
    ["https://[fd00::1]/hook", "reserved"],
    ["https://[fe80::1]/hook", "reserved"],
    ["https://[::ffff:10.0.0.1]/hook", "reserved"],
    ["https://localhost/hook", "reserved"],
    ["https://[::127.0.0.1]/hook", "reserved"],
    ["https://[::ffff:0:127.0.0.1]/hook", "reserved"],
    ["https://[2002:7f00:1::]/hook", "reserved"],
    ["https://[2001:0:1::1]/hook", "reserved"],
    ["https://[2001:db8::1]/hook", "reserved"],
    ["https://[64:ff9b::a00:1]/hook", "reserved"],
    ["https://[100::1]/hook", "reserved"],
    ["https://[fec0::1]/hook", "reserved"],
    ["https://[3fff::1]/hook", "reserved"],
    ["https://[ff02::1]/hook", "reserved"],
    ["https://[::]/hook", "reserved"],
    ["https://192.88.99.1/hook", "reserved"],
    ["https://0x7f.1/hook", "reserved"],
    ["https://2130706433/hook", "reserved"],
    ["https://vm/hook", "not public"],
    ["https://vm./hook", "not public"],
    ["https://printer.local/hook", "not public"],
    ["https://api.localhost/hook", "not public"],
    ["https://localhost./hook", "not public"],
    ["https://metadata.google.internal/hook", "not public"],
    ["https://nas.home.arpa/hook", "not public"],
    ["https://1.0.0.10.in-addr.arpa/hook", "not public"],
    ["https://svc.corp/hook", "not public"],
    ["https://x.onion/hook", "not public"],
    ["https://receiver.test/hook", "not public"],
    ["https://EXAMPLE.INVALID/hook", "not public"],
  ])("refuses %s", (url, why) => expect(webhookUrlProblem(url, false)).toContain(why));

  it("takes http to a development host only while WEBHOOK_ALLOW_LOOPBACK is true", () => {
    for (const url of ["http://localhost:8080/h", "http://127.0.0.1:9/h", "http://[::1]:9/h"]) {
      expect(webhookUrlProblem(url, true), url).toBeNull();
      expect(webhookUrlProblem(url, false), url).not.toBeNull();
    }
    expect(webhookUrlProblem("http://10.0.0.1/h", true)).not.toBeNull();
  });
});
