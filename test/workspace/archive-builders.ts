/**
 * Writers of real zip and tar files for tests, byte by byte, so that tests can build the archives
 * that well-behaved tools refuse to make: `..` and absolute names, links, devices, and headers that
 * lie about sizes. Every archive they write is read by the system's own `tar` and `unzip`-compatible
 * readers the same way (the tests check that with GNU tar).
 */
import { crc32, deflateRawSync, gzipSync } from "node:zlib";

export interface ZipEntrySpec {
  name: string;
  data?: Buffer | string;
  /** Unix mode including the type bits (e.g. 0o100644, 0o120777 for a symlink). */
  mode?: number;
  /** Deflate the data (default true). */
  deflate?: boolean;
  /** The uncompressed size written in the headers (default: the real size). A bomb lies here. */
  declaredSize?: number;
}

export function zipBytes(entries: ZipEntrySpec[]): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const e of entries) {
    const data = Buffer.from(e.data ?? "");
    const deflate = e.deflate ?? !e.name.endsWith("/");
    const body = deflate ? deflateRawSync(data) : data;
    const name = Buffer.from(e.name, "utf8");
    const size = e.declaredSize ?? data.length;
    const crc = crc32(data);
    const method = deflate ? 8 : 0;
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4); // version needed
    local.writeUInt16LE(0x0800, 6); // UTF-8 names
    local.writeUInt16LE(method, 8);
    local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(body.length, 18);
    local.writeUInt32LE(size, 22);
    local.writeUInt16LE(name.length, 26);
    locals.push(local, name, body);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE((3 << 8) | 20, 4); // made by Unix
    central.writeUInt16LE(20, 6);
    central.writeUInt16LE(0x0800, 8);
    central.writeUInt16LE(method, 10);
    central.writeUInt32LE(crc, 16);
    central.writeUInt32LE(body.length, 20);
    central.writeUInt32LE(size, 24);
    central.writeUInt16LE(name.length, 28);
    const mode = e.mode ?? (e.name.endsWith("/") ? 0o040755 : 0o100644);
    central.writeUInt32LE(((mode << 16) | (e.name.endsWith("/") ? 0x10 : 0)) >>> 0, 38);
    central.writeUInt32LE(offset, 42);
    centrals.push(central, name);
    offset += local.length + name.length + body.length;
  }
  const cd = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(cd.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, cd, end]);
}

export interface TarEntrySpec {
  name: string;
  data?: Buffer | string;
  /** ustar type flag: "0" file, "1" hard link, "2" symlink, "3" char device, "4" block device, "5" folder, "6" fifo. */
  type?: string;
  mode?: number;
  linkname?: string;
}

function octal(value: number, width: number): string {
  return `${value.toString(8).padStart(width - 1, "0")}\0`;
}

function tarHeader(e: TarEntrySpec, size: number): Buffer {
  const h = Buffer.alloc(512);
  h.write(e.name, 0, 100, "utf8");
  h.write(octal(e.mode ?? (e.type === "5" ? 0o755 : 0o644), 8), 100, "latin1");
  h.write(octal(0, 8), 108, "latin1");
  h.write(octal(0, 8), 116, "latin1");
  h.write(octal(size, 12), 124, "latin1");
  h.write(octal(946684800, 12), 136, "latin1");
  h.write("        ", 148, "latin1");
  h.write(e.type ?? "0", 156, "latin1");
  if (e.linkname) h.write(e.linkname, 157, 100, "utf8");
  h.write("ustar\u000000", 257, "latin1");
  h.write(octal(0, 8), 329, "latin1");
  h.write(octal(0, 8), 337, "latin1");
  let sum = 0;
  for (const b of h) sum += b;
  h.write(`${sum.toString(8).padStart(6, "0")}\0 `, 148, "latin1");
  return h;
}

export function tarBytes(entries: TarEntrySpec[]): Buffer {
  const parts: Buffer[] = [];
  for (const e of entries) {
    const data = Buffer.from(e.data ?? "");
    parts.push(tarHeader(e, data.length), data, Buffer.alloc((512 - (data.length % 512)) % 512));
  }
  parts.push(Buffer.alloc(1024));
  return Buffer.concat(parts);
}

export function tarGzBytes(entries: TarEntrySpec[]): Buffer {
  return gzipSync(tarBytes(entries));
}
