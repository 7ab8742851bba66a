/**
 * Small PDF files with a given number of pages, as base64, for the tests of what a request carries
 * for a PDF: the page objects written plainly (as simple writers do), or packed in a compressed
 * object stream (as PDF 1.5 writers such as browsers' print-to-PDF do). The pages are empty: what
 * matters is the page tree.
 */
import { deflateSync } from 'node:zlib';

export function pdfFile(pages: number, layout: 'plain' | 'packed' = 'plain'): string {
  const kids = Array.from({ length: pages }, (_, i) => `${i + 3} 0 R`).join(' ');
  const pageObjects = Array.from({ length: pages }, (_, i) => ({ n: i + 3, body: '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] >>' }));
  const head = `%PDF-1.5\n1 0 obj\n<< /Type /Catalog /Pages 2 0 R >>\nendobj\n2 0 obj\n<< /Type /Pages /Kids [${kids}] /Count ${pages} >>\nendobj\n`;
  if (layout === 'plain') {
    return Buffer.from(head + pageObjects.map((o) => `${o.n} 0 obj\n${o.body}\nendobj\n`).join('') + '%%EOF\n', 'latin1').toString('base64');
  }
  // An object stream: "n offset" pairs, then the objects (PDF 32000-1 §7.5.7).
  let offsets = '';
  let objects = '';
  for (const o of pageObjects) {
    offsets += `${o.n} ${objects.length} `;
    objects += `${o.body}\n`;
  }
  const packed = deflateSync(Buffer.from(offsets + objects, 'latin1'));
  const dict = `<< /Type /ObjStm /N ${pages} /First ${offsets.length} /Filter /FlateDecode /Length ${packed.length} >>`;
  return Buffer.concat([Buffer.from(`${head}${pages + 3} 0 obj\n${dict}\nstream\r\n`, 'latin1'), packed, Buffer.from('\r\nendstream\nendobj\n%%EOF\n', 'latin1')]).toString('base64');
}
