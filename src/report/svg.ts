/** Small inline SVG charts for the report pages: horizontal bars, no script, no network. Pure. */
import escape from 'escape-html';

export interface Bar {
  label: string;
  /** Segments drawn left to right, each a share of `max`. */
  segments: Array<{ value: number; color: string; title: string }>;
  /** Text at the end of the bar. */
  note: string;
}

const ROW = 26;
const LABEL_W = 170;
const BAR_W = 260;
const NOTE_W = 110;

/** One bar per row; `max` is the full width. */
export function barChart(bars: Bar[], max: number, opts: { title: string; id: string }): string {
  const height = Math.max(1, bars.length) * ROW + 8;
  const width = LABEL_W + BAR_W + NOTE_W;
  const scale = max > 0 ? BAR_W / max : 0;
  const rows = bars.map((b, i) => {
    const y = 4 + i * ROW;
    let x = LABEL_W;
    const rects = b.segments
      .filter((s) => s.value > 0)
      .map((s) => {
        const w = Math.max(1, s.value * scale);
        const r = `<rect class="seg" x="${x.toFixed(1)}" y="${y + 3}" width="${w.toFixed(1)}" height="${ROW - 8}" fill="${s.color}"><title>${escape(s.title)}</title></rect>`;
        x += w;
        return r;
      })
      .join('');
    return (
      `<text x="${LABEL_W - 8}" y="${y + ROW / 2 + 4}" text-anchor="end">${escape(b.label.length > 26 ? `${b.label.slice(0, 25)}…` : b.label)}</text>` +
      `<rect x="${LABEL_W}" y="${y + 3}" width="${BAR_W}" height="${ROW - 8}" fill="#eef0f3"/>${rects}` +
      `<text x="${LABEL_W + BAR_W + 8}" y="${y + ROW / 2 + 4}">${escape(b.note)}</text>`
    );
  });
  return (
    `<svg id="${escape(opts.id)}" class="chart" role="img" aria-label="${escape(opts.title)}" viewBox="0 0 ${width} ${height}" width="${width}" height="${height}" xmlns="http://www.w3.org/2000/svg">` +
    `<title>${escape(opts.title)}</title>${rows.join('')}</svg>`
  );
}

/** Two overlapping circles with the counts only in A, in both and only in B (paper Fig. 6, for two runs). */
export function overlapChart(a: { name: string; only: number }, b: { name: string; only: number }, both: number, id: string): string {
  return (
    `<svg id="${escape(id)}" class="chart" role="img" aria-label="instances solved by each run" viewBox="0 0 420 200" width="420" height="200" xmlns="http://www.w3.org/2000/svg">` +
    `<circle cx="160" cy="100" r="80" fill="#3b82f6" fill-opacity="0.35" stroke="#1d4ed8"/>` +
    `<circle cx="260" cy="100" r="80" fill="#f59e0b" fill-opacity="0.35" stroke="#b45309"/>` +
    `<text x="120" y="106" text-anchor="middle" class="big">${a.only}</text>` +
    `<text x="210" y="106" text-anchor="middle" class="big">${both}</text>` +
    `<text x="300" y="106" text-anchor="middle" class="big">${b.only}</text>` +
    `<text x="120" y="196" text-anchor="middle">${escape(a.name.slice(0, 30))}</text>` +
    `<text x="300" y="196" text-anchor="middle">${escape(b.name.slice(0, 30))}</text></svg>`
  );
}
