/**
 * Fitting a document into a size budget by leaving parts out, least important first.
 *
 * A document is a tree of pieces. Each piece is balanced markdown on its own (a `<details>` or a
 * fence opens in `open` and closes in `close`, around its children), so removing any piece keeps
 * the rest valid. A piece with a `rank` may be left out; lower ranks go first and, within a rank,
 * later pieces before earlier ones (the end of a table before its top). What was left out is
 * counted by kind so the reader can be told.
 */

export interface Piece {
  open: string;
  children?: Piece[];
  close?: string;
  /** Droppable when set: lower ranks are dropped first. */
  rank?: number;
  /** What stays in its place when the piece is dropped. */
  alt?: string;
  /** Counted (by kind) when the piece is dropped. */
  omits?: string;
  /** Dropped, with its `alt`, once all its children are dropped. */
  dropWhenEmpty?: boolean;
}

export interface Budget {
  /** Characters as JavaScript counts them (UTF-16 code units: never fewer than code points). */
  chars: number;
  /** UTF-8 bytes, when the limit is in bytes (a job summary). */
  bytes?: number;
}

export interface Size {
  chars: number;
  bytes: number;
}

export function sizeOf(s: string): Size {
  return { chars: s.length, bytes: Buffer.byteLength(s, "utf8") };
}

export function within(size: Size, budget: Budget): boolean {
  return size.chars <= budget.chars && (budget.bytes === undefined || size.bytes <= budget.bytes);
}

interface Node {
  piece: Piece;
  parent: Node | undefined;
  children: Node[];
  own: Size;
  alt: Size;
  /** Size of the subtree as it renders now. */
  total: Size;
  dropped: boolean;
  /** Children not dropped yet (so a table of 2,000 rows is not rescanned at every drop). */
  left: number;
  order: number;
}

const add = (a: Size, b: Size, sign = 1): Size => ({
  chars: a.chars + sign * b.chars,
  bytes: a.bytes + sign * b.bytes,
});

export interface Fitted {
  body: string;
  /** Dropped pieces by kind. */
  omitted: Map<string, number>;
  /** Whether body plus the tail fit the budget. */
  fits: boolean;
}

/**
 * Drops pieces until `body + tail(omitted)` fits the budget (the tail says what was left out, so its
 * size depends on it), or nothing droppable is left.
 */
export function fitPieces(
  pieces: readonly Piece[],
  budget: Budget,
  tail: (omitted: Map<string, number>) => string,
): Fitted {
  let order = 0;
  const droppable: Node[] = [];
  // UTF-8 sizes are counted only when the budget has a byte limit: a PR comment's is in characters,
  // and measuring the bytes of every piece of a 2,000-case comment is a third of its time.
  const measure = budget.bytes === undefined ? (s: string): Size => ({ chars: s.length, bytes: 0 }) : sizeOf;
  const build = (piece: Piece, parent: Node | undefined): Node => {
    const node: Node = {
      piece,
      parent,
      children: [],
      own: add(measure(piece.open), measure(piece.close ?? "")),
      alt: measure(piece.alt ?? ""),
      total: { chars: 0, bytes: 0 },
      dropped: false,
      left: 0,
      order: order++,
    };
    node.children = (piece.children ?? []).map((c) => build(c, node));
    node.left = node.children.length;
    node.total = node.children.reduce((s, c) => add(s, c.total), node.own);
    if (piece.rank !== undefined) droppable.push(node);
    return node;
  };
  const roots = pieces.map((p) => build(p, undefined));
  let total = roots.reduce((s, r) => add(s, r.total), { chars: 0, bytes: 0 });
  const omitted = new Map<string, number>();
  // The tail is rendered only once the body alone fits: it says what was left out, so it changes
  // with every drop, and while the body is over budget, body + tail is too.
  const fitsNow = () => within(total, budget) && within(add(total, measure(tail(omitted))), budget);

  const gone = (n: Node): boolean => {
    for (let x: Node | undefined = n; x; x = x.parent) if (x.dropped) return true;
    return false;
  };
  const drop = (n: Node): void => {
    const delta = add(n.total, n.alt, -1);
    n.dropped = true;
    n.total = n.alt;
    for (let p = n.parent; p; p = p.parent) p.total = add(p.total, delta, -1);
    total = add(total, delta, -1);
    if (n.piece.omits) omitted.set(n.piece.omits, (omitted.get(n.piece.omits) ?? 0) + 1);
    const parent = n.parent;
    if (parent) parent.left--;
    if (parent?.piece.dropWhenEmpty && !gone(parent) && parent.left === 0) drop(parent);
  };

  droppable.sort((a, b) => a.piece.rank! - b.piece.rank! || b.order - a.order);
  for (const n of droppable) {
    if (fitsNow()) break;
    if (!gone(n)) drop(n);
  }
  const render = (n: Node): string =>
    n.dropped ? (n.piece.alt ?? "") : n.piece.open + n.children.map(render).join("") + (n.piece.close ?? "");
  return { body: roots.map(render).join(""), omitted, fits: fitsNow() };
}
