/**
 * Globs matched against the paths an agent wrote. picomatch's `*` and `**` stop at a line break
 * (its regular expressions use `.`), so `src/**` missed `src/a<newline>.js`: an agent could put a
 * protected or denied file out of reach with a newline in its name. Line breaks are read as an
 * ordinary character for matching (docs/decisions/0076).
 */
import picomatch from "picomatch";

const LINE_BREAKS = /[\n\r\u2028\u2029]/g;

export function pathMatcher(globs: readonly string[]): (rel: string) => boolean {
  const isMatch = picomatch([...globs], { dot: true });
  return (rel) => isMatch(rel.replace(LINE_BREAKS, "\uFFFD"));
}
