/**
 * A model's answer cut at its token limit ends inside its code block: the file is half a line and
 * its closing brackets short. Made whole where that is safe (pure): the unfinished line dropped,
 * the brackets still open closed in order, a Python block header given a body, the fence closed.
 * Small models run into the limit in a loop of ever longer asserts (Qwen2.5-Coder 1.5B on
 * camelcase: 20 `t.is(camelCase('_id_1_2…'))` lines) after the lines that matter.
 */

export interface ClosedAnswer {
  text: string;
  /** What was done, for the attempt's notes; undefined when the answer was left as it was. */
  note?: string;
}

const CLOSER: Record<string, string> = { '(': ')', '[': ']', '{': '}' };

/** How a language's text reads here: `#` comments and triple quotes (Python, Ruby, shell), Rust's lifetimes (`&'a str`). */
export interface Syntax {
  hashComments: boolean;
  lifetimes: boolean;
}

/** Brackets left open by `code`, in order; undefined when it ends inside a string or block comment (then nothing is safe). */
export function openBrackets(code: string, { hashComments, lifetimes }: Syntax): string[] | undefined {
  const stack: string[] = [];
  let i = 0;
  const n = code.length;
  while (i < n) {
    const c = code[i]!;
    const two = code.slice(i, i + 2);
    if (two === '//' && !hashComments) {
      i = code.indexOf('\n', i);
      if (i < 0) break;
      continue;
    }
    if (c === '#' && hashComments) {
      i = code.indexOf('\n', i);
      if (i < 0) break;
      continue;
    }
    if (two === '/*' && !hashComments) {
      const end = code.indexOf('*/', i + 2);
      if (end < 0) return undefined;
      i = end + 2;
      continue;
    }
    // A Rust lifetime (`&'a str`) is no string: a letter after the quote and no quote after it.
    if (c === "'" && lifetimes && /^'[A-Za-z_]\w*(?!['\w])/.test(code.slice(i, i + 40))) {
      i++;
      continue;
    }
    if (c === '"' || c === "'" || c === '`') {
      const triple = hashComments && code.slice(i, i + 3) === c.repeat(3);
      const quote = triple ? c.repeat(3) : c;
      let j = i + quote.length;
      for (;;) {
        if (j >= n) return undefined;
        if (code[j] === '\\') {
          j += 2;
          continue;
        }
        // A plain string ends at its line's end in every language here but a template or a triple quote.
        if (code[j] === '\n' && quote.length === 1 && c !== '`') return undefined;
        if (code.startsWith(quote, j)) break;
        j++;
      }
      i = j + quote.length;
      continue;
    }
    if (c in CLOSER) stack.push(c);
    else if (c === ')' || c === ']' || c === '}') {
      if (CLOSER[stack.at(-1) ?? ''] !== c) return undefined;
      stack.pop();
    }
    i++;
  }
  return stack;
}

/** The syntax of a block, from its info string (`python`, `rust`, a path), else from what it holds. */
function syntaxOf(info: string, body: string): Syntax {
  const named = (re: RegExp, ext: RegExp) => re.test(info) || ext.test(info);
  if (info.trim()) return { hashComments: named(/^(py|python\d?|rb|ruby|sh|bash)\b/i, /\.(py|rb|sh)\b/), lifetimes: named(/^(rs|rust)\b/i, /\.rs\b/) };
  return { hashComments: /^(def |class |import |from \S+ import )/m.test(body) && !/[{;]\s*$/m.test(body), lifetimes: /^\s*(pub\s+)?fn\s/m.test(body) };
}

export function closeCutAnswer(answer: string): ClosedAnswer {
  const lines = answer.replace(/\r\n/g, '\n').split('\n');
  // The last fence opened and never closed.
  let open = -1;
  let fence = '';
  let info = '';
  for (let i = 0; i < lines.length; i++) {
    const m = /^\s*(`{3,}|~{3,})(.*)$/.exec(lines[i]!);
    if (!m) continue;
    if (open < 0) [open, fence, info] = [i, m[1]!, m[2]!.trim()];
    else if (m[1]!.startsWith(fence) && !m[2]!.trim()) open = -1;
  }
  if (open < 0) return { text: answer };
  const body = lines.slice(open + 1);
  // The cut fell inside the last line unless the answer ended with its newline.
  const dropped = answer.endsWith('\n') ? 0 : 1;
  if (dropped) body.pop();
  while (body.length && !body.at(-1)!.trim()) body.pop();
  if (!body.length) return { text: answer };
  const code = body.join('\n');
  const syntax = syntaxOf(info, code);
  const stack = openBrackets(code, syntax);
  if (!stack) return { text: answer };
  const tail: string[] = [];
  if (stack.length) tail.push(stack.reverse().map((b) => CLOSER[b]).join(''));
  // A Python block whose body was cut away: `pass` keeps the file importable.
  const last = body.at(-1)!;
  if (syntax.hashComments && !stack.length && /:\s*(#.*)?$/.test(last)) tail.push(`${/^\s*/.exec(last)![0]}    pass`);
  const fixed = [...lines.slice(0, open + 1), ...body, ...tail, fence].join('\n');
  const what = [dropped ? 'its unfinished last line dropped' : '', tail.length ? `\`${tail.map((t) => t.trim()).join(' ')}\` added` : ''].filter(Boolean).join(', ');
  return { text: `${fixed}\n`, note: `the answer was cut at the answer limit: ${what || 'its code block closed'}` };
}
