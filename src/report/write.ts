import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { renderReportHtml, type ReportPage } from './html.js';

export const REPORT_HTML = 'report.html';

/** Writes `<out>/report.html` and returns its path. */
export async function writeReportHtml(out: string, p: Omit<ReportPage, 'generatedAt'>): Promise<string> {
  const path = join(out, REPORT_HTML);
  await writeFile(path, renderReportHtml({ ...p, generatedAt: new Date().toISOString().replace(/\.\d+Z$/, 'Z') }));
  return path;
}
