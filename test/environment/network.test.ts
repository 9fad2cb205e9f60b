/**
 * The addressing of an engine's network from its `network inspect`: where the loopback forwarder
 * and the allow-list proxy are reached from a container (src/environment/network.ts).
 */
import type os from "node:os";
import { describe, expect, it } from "vitest";
import { addressingOf } from "../../src/environment/network.js";

/** `docker network inspect bridge` of Docker 20.10's default network (trimmed): no Gateway. */
const DOCKER_BRIDGE = JSON.stringify([
  {
    Name: "bridge",
    Id: "bbd046fc72d8c0b1f0a4f2a7b0d6a3e1c7f1e0d2c3b4a5968778695a4b3c2d1e",
    Driver: "bridge",
    IPAM: { Driver: "default", Options: null, Config: [{ Subnet: "172.17.0.0/16" }] },
    Options: {
      "com.docker.network.bridge.default_bridge": "true",
      "com.docker.network.bridge.name": "docker0",
    },
  },
]);

/** A user-defined (`network create --internal`) Docker network: Gateway given, bridge `br-<id>`. */
const DOCKER_INTERNAL = JSON.stringify([
  {
    Name: "evalgate-allow",
    Id: "5e2a9c0d7b1f44aa0e3b9f6c1d2e3f4a5b6c7d8e9f0a1b2c3d4e5f6a7b8c9d0e",
    Driver: "bridge",
    Internal: true,
    IPAM: { Driver: "default", Config: [{ Subnet: "172.18.0.0/16", Gateway: "172.18.0.1" }] },
    Options: {},
  },
]);

const iface = (address: string): os.NetworkInterfaceInfo[] => [
  { address, netmask: "255.255.0.0", family: "IPv4", mac: "02:42:00:00:00:00", internal: false, cidr: null },
];

describe("addressingOf", () => {
  it("finds Docker's default bridge's gateway on the bridge interface, else at the subnet's first address", () => {
    // before: undefined (no IPAM Gateway), so a loopback URL was never forwarded under Docker.
    expect(addressingOf("docker", DOCKER_BRIDGE, { docker0: iface("172.17.0.1") })).toEqual({
      gateway: "172.17.0.1",
      subnet: "172.17.0.0/16",
      iface: "docker0",
    });
    // --bip 172.17.5.9/16: the interface's own address, not the first of the subnet.
    expect(addressingOf("docker", DOCKER_BRIDGE, { docker0: iface("172.17.5.9") })?.gateway).toBe(
      "172.17.5.9",
    );
    // The interface not visible here: Docker's default, the first host address.
    expect(addressingOf("docker", DOCKER_BRIDGE, {})?.gateway).toBe("172.17.0.1");
  });

  it("takes a user-defined network's gateway as given, its interface named after its id", () => {
    expect(addressingOf("docker", DOCKER_INTERNAL, {})).toEqual({
      gateway: "172.18.0.1",
      subnet: "172.18.0.0/16",
      iface: "br-5e2a9c0d7b1f",
    });
  });

  it("reads Podman's subnets and interface", () => {
    const podman = JSON.stringify([
      {
        name: "podman",
        network_interface: "podman0",
        subnets: [{ subnet: "10.88.0.0/16", gateway: "10.88.0.1" }],
      },
    ]);
    expect(addressingOf("podman", podman)).toEqual({
      gateway: "10.88.0.1",
      subnet: "10.88.0.0/16",
      iface: "podman0",
    });
    expect(addressingOf("podman", "not json")).toBeUndefined();
  });
});
