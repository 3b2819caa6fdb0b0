import { describe, expect, it } from "vitest";
import { classifyAddress } from "./address-policy.js";

describe("classifyAddress", () => {
  it.each([
    ["8.8.8.8", "unicast"],
    ["172.32.0.1", "unicast"],
    ["2606:4700::1111", "unicast"],
    ["::ffff:8.8.8.8", "ipv4Mapped"],
    ["64:ff9b::808:808", "rfc6052"],
    ["2002:808:808::1", "6to4"],
  ])("lets the public address %s through", (address, range) => {
    expect(classifyAddress(address)).toEqual({ scope: "public", range });
  });

  it.each([
    ["10.0.0.1", "private"],
    ["172.16.0.1", "private"],
    ["172.31.255.255", "private"],
    ["192.168.0.1", "private"],
    ["100.64.0.1", "carrierGradeNat"],
    ["127.0.0.1", "loopback"],
    ["127.255.255.254", "loopback"],
    ["169.254.169.254", "linkLocal"],
    ["192.0.2.1", "reserved"],
    ["198.18.0.1", "reserved"],
    ["240.0.0.1", "reserved"],
    ["::1", "loopback"],
    ["[::1]", "loopback"],
    ["fe80::1", "linkLocal"],
    ["fc00::", "uniqueLocal"],
    ["fd12:3456::1", "uniqueLocal"],
    ["fec0::1", "deprecatedSiteLocal"],
    ["::ffff:127.0.0.1", "ipv4Mapped:loopback"],
    ["::ffff:a9fe:a9fe", "ipv4Mapped:linkLocal"],
    ["::ffff:0:10.0.0.1", "rfc6145:private"],
    ["64:ff9b::7f00:1", "rfc6052:loopback"],
    ["64:ff9b::a00:1", "rfc6052:private"],
    ["64:ff9b:1::a00:1", "rfc6052"],
    ["2002:7f00:1::", "6to4:loopback"],
    ["2001::1", "teredo"],
    ["2001:db8::1", "reserved"],
    ["::7f00:1", "reserved"],
    ["100::1", "discard"],
  ])("keeps %s internal (%s)", (address, range) => {
    expect(classifyAddress(address)).toEqual({ scope: "internal", range });
  });

  it.each([
    ["0.0.0.0", "unspecified"],
    ["0.1.2.3", "unspecified"],
    ["255.255.255.255", "broadcast"],
    ["224.0.0.1", "multicast"],
    ["::", "unspecified"],
    ["ff02::1", "multicast"],
    ["::ffff:0.0.0.0", "ipv4Mapped:unspecified"],
    ["0177.0.0.1", "invalid"],
    ["2130706433", "invalid"],
    ["127.1", "invalid"],
    ["fe80::1%eth0", "invalid"],
    ["example.com", "invalid"],
  ])("never lets %s through (%s)", (address, range) => {
    expect(classifyAddress(address)).toEqual({ scope: "unroutable", range });
  });
});
