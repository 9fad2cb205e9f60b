import { describe, expect, it } from "vitest";
import { formatSize, parseSize, SIZE_PATTERN } from "../../src/config/size.js";

describe("sizes", () => {
  it.each<[string | number, number]>([
    ["10MiB", 10 * 1024 * 1024],
    ["512 KiB", 512 * 1024],
    ["2MB", 2_000_000],
    ["1.5kib", 1536],
    ["100B", 100],
    ["100", 100],
    [4096, 4096],
    ["1GiB", 1024 ** 3],
  ])("%s is %d bytes", (text, bytes) => {
    expect(parseSize(text)).toBe(bytes);
  });

  it.each(["ten", "10 MiBs", "-1MB", "1 TB", ""])("refuses %j", (text) => {
    expect(SIZE_PATTERN.test(text)).toBe(false);
    expect(() => parseSize(text)).toThrow(/not a size/);
  });

  it("formats sizes for people", () => {
    expect(formatSize(10 * 1024 * 1024)).toBe("10 MiB");
    expect(formatSize(1536)).toBe("1.5 KiB");
    expect(formatSize(900)).toBe("900 B");
  });
});
