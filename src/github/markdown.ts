/**
 * Which lines of a GitHub comment a reader sees as plain text. The block structure comes from
 * commonmark.js, the CommonMark reference parser (not from patterns): an HTML comment, a fence
 * left open, a `~~~` fence, an indented block or a lazily continued quote end where the Markdown
 * rules say, which a regex gets wrong.
 *
 * Only blocks are parsed. Inline parsing (links, emphasis) is skipped: commonmark.js takes seconds
 * on a 64 KiB comment of unclosed links, and a comment is anyone's input. What inline syntax could
 * hide across lines (an inline HTML comment or tag, a code span, a link's title) opens with `<`,
 * `` ` `` or `[`, so a line counts only when no earlier line of its paragraph holds one: a command
 * after such a line in the same paragraph is ignored, never a hidden one taken.
 */
import { Parser, type Node } from 'commonmark';

/** Leaf blocks whose lines are shown as text; everything else (HTML, code, a quote's words) is not. */
const TEXT_BLOCKS = new Set(['paragraph', 'heading']);
/** Containers shown as someone's text, or not at all. */
const HIDING_BLOCKS = new Set(['block_quote', 'html_block', 'code_block']);
/** What can open an inline construct that runs over later lines of a paragraph. */
const OPENS_INLINE = /[<`[]/;

/** `<details>` opened and closed in an HTML block: the blocks between are folded away until clicked. */
const depthChange = (html: string) => (html.match(/<details\b/gi)?.length ?? 0) - (html.match(/<\/details\s*>/gi)?.length ?? 0);

/** Marks the lines of `node`'s children that a reader sees as text (1-based source lines). */
function markVisible(node: Node, lines: string[], visible: boolean[]): void {
  let folded = 0;
  for (let child = node.firstChild; child; child = child.next) {
    if (child.type === 'html_block') folded = Math.max(0, folded + depthChange(child.literal ?? ''));
    if (folded > 0 || HIDING_BLOCKS.has(child.type)) continue;
    if (!TEXT_BLOCKS.has(child.type)) {
      markVisible(child, lines, visible);
      continue;
    }
    const [[first], [last]] = child.sourcepos;
    for (let n = first; n <= last; n++) {
      visible[n - 1] = true;
      if (OPENS_INLINE.test(lines[n - 1] ?? '')) break; // the lines after it may sit inside an inline construct
    }
  }
}

/**
 * The comment with every line a reader does not see as plain text emptied (the line count is
 * kept, so a line's number and its start stay what they were).
 */
export function visibleText(markdown: string): string {
  const parser = new Parser();
  // Blocks only (see above): parse() calls this to parse each paragraph's inlines.
  (parser as unknown as { processInlines: () => void }).processInlines = () => undefined;
  const lines = markdown.split(/\r\n|\n|\r/);
  const visible = lines.map(() => false);
  markVisible(parser.parse(markdown), lines, visible);
  return lines.map((l, i) => (visible[i] ? l : '')).join('\n');
}
