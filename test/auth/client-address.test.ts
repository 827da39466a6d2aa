import { describe, expect, it } from "vitest";
import { throttledAddress } from "../../src/auth/client-address";
import { call, expectProblem, newAccount } from "../helpers";

describe("the address a sign-in is counted under", () => {
  it("is an IPv6 address's /64, whatever its notation", () => {
    const forms = [
      "2001:db8:1:2::1",
      "2001:0db8:0001:0002:0000:0000:0000:0002",
      "2001:DB8:1:2::3",
      "2001:db8:1:2:0:0:0:4",
      "2001:db8:1:2:ffff::5",
      "[2001:db8:1:2::6]",
      "2001:db8:1:2::7%eth0",
      "2001:db8:1:2:1:2:3.4.5.6",
    ];
    for (const form of forms) expect(throttledAddress(form), form).toBe("2001:db8:1:2::/64");
    expect(throttledAddress("2001:db8:1:3::1")).toBe("2001:db8:1:3::/64");
    expect(throttledAddress("::1")).toBe("0:0:0:0::/64");
    expect(throttledAddress("fe80::1")).toBe("fe80:0:0:0::/64");
  });

  it("is the IPv4 address of an IPv4-mapped one, and an IPv4 address as it is", () => {
    for (const form of ["203.0.113.9", "::ffff:203.0.113.9", "::FFFF:cb00:7109", "0:0:0:0:0:ffff:203.0.113.9", " 203.0.113.9 "])
      expect(throttledAddress(form), form).toBe("203.0.113.9");
  });

  it("counts anything else as itself, and a missing address as unknown", () => {
    for (const [raw, counted] of [
      [undefined, "unknown"],
      ["", "unknown"],
      ["not an address", "not an address"],
      ["1:2:3:4:5:6:7:8:9", "1:2:3:4:5:6:7:8:9"],
      ["1::2::3", "1::2::3"],
      ["1.2.3.256", "1.2.3.256"],
      ["12345::1", "12345::1"],
    ] as const) {
      expect(throttledAddress(raw), String(raw)).toBe(counted);
    }
  });

  it("lets ten wrong passwords from one /64 through, then answers 429 to any address in it, and 200 to another /64", async () => {
    const account = await newAccount();
    const signIn = (ip: string, password = "wrong-password") => call("POST", "/auth/token", { headers: { "cf-connecting-ip": ip }, body: { email: account.email, password } });
    for (let i = 1; i <= 10; i++) expect((await signIn(`2001:db8:1:2::${i.toString(16)}`)).status).toBe(401);
    expectProblem(await signIn("2001:0db8:0001:0002:ffff:ffff:ffff:ffff"), 429, "rate_limited");
    expectProblem(await signIn("2001:db8:1:2::1", account.password), 429, "rate_limited");
    expect((await signIn("2001:db8:9:9::1", account.password)).status).toBe(200);
  });
});
