// The /metrics registry renders what a Prometheus scraper reads back exactly: label values and
// help text escaped (not mangled), one family per name, histogram buckets ascending and cumulative.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Metrics } from '../../../src/daemon/metrics.js';
import { parsePrometheusText } from '../../support/prometheus-text.js';

test('label values with quotes, backslashes and line feeds come back as they were; the same labels in another order are one series', () => {
  const m = new Metrics();
  const inc = m.counter('t_total', 'a help with a \\ and a\nline feed');
  const odd = 'say "hi"\\there\nnext';
  inc({ reason: odd, kind: 'a' });
  inc({ kind: 'a', reason: odd }, 2);
  const f = parsePrometheusText(m.render()).get('t_total')!;
  assert.equal(f.help, 'a help with a \\ and a\nline feed');
  assert.deepEqual(f.samples, [{ name: 't_total', labels: { kind: 'a', reason: odd }, value: 3 }]);
});

test('histogram buckets given out of order are rendered ascending, cumulative, with +Inf equal to the count', () => {
  const m = new Metrics();
  const observe = m.histogram('h_seconds', 'a histogram', [1, 0.1, 0.5, 0.1, Infinity]);
  for (const v of [0.05, 0.3, 0.7, 2]) observe(v, { op: 'x' });
  const f = parsePrometheusText(m.render()).get('h_seconds')!;
  assert.equal(f.type, 'histogram');
  const buckets = f.samples.filter((s) => s.name === 'h_seconds_bucket').map((s) => [s.labels.le, s.value]);
  assert.deepEqual(buckets, [['0.1', 1], ['0.5', 2], ['1', 3], ['+Inf', 4]]);
  assert.deepEqual(f.samples.filter((s) => s.name !== 'h_seconds_bucket').map((s) => [s.name, s.value]), [['h_seconds_sum', 3.05], ['h_seconds_count', 4]]);
});

test('a name registered twice, of the same kind or another, is refused at registration', () => {
  const m = new Metrics();
  m.counter('x_total', 'a counter');
  assert.throws(() => m.counter('x_total', 'again'), /already registered/);
  assert.throws(() => m.gauge('x_total', 'a gauge', () => 1), /already registered/);
  assert.throws(() => m.histogram('x_total', 'a histogram', [1]), /already registered/);
  parsePrometheusText(m.render());
});

test('the strict reader refuses what a scraper would misread', () => {
  const bad = [
    'a 1', // no final line feed
    '# TYPE a counter\n# TYPE a counter\na 1\n',
    '# TYPE a gauge\na 1\n# TYPE b gauge\nb 1\na 2\n',
    'a{l="x"} 1\na{l="x"} 2\n',
    'a{l="un"escaped"} 1\n',
    '# TYPE h histogram\nh_bucket{le="1"} 2\nh_bucket{le="0.5"} 1\nh_bucket{le="+Inf"} 2\nh_sum 1\nh_count 2\n',
    '# TYPE h histogram\nh_bucket{le="0.5"} 2\nh_bucket{le="1"} 1\nh_bucket{le="+Inf"} 2\nh_sum 1\nh_count 2\n',
    '# TYPE h histogram\nh_bucket{le="1"} 2\nh_sum 1\nh_count 2\n',
    '# TYPE h histogram\nh_bucket{le="1"} 2\nh_bucket{le="+Inf"} 3\nh_sum 1\nh_count 2\n',
  ];
  for (const text of bad) assert.throws(() => parsePrometheusText(text), Error, JSON.stringify(text));
  assert.equal(parsePrometheusText('# HELP a b\n# TYPE a gauge\na{l="x\\"y"} 1.5e3\n').get('a')!.samples[0]!.value, 1500);
});

test('a counter without labels starts at 0; a labelled one shows no sample until its first label set is counted', () => {
  const m = new Metrics();
  m.counter('plain_total', 'no labels');
  const inc = m.counter('by_reason_total', 'labelled', { labelled: true });
  let families = parsePrometheusText(m.render());
  assert.deepEqual(families.get('plain_total')!.samples, [{ name: 'plain_total', labels: {}, value: 0 }]);
  assert.equal(families.get('by_reason_total')!.type, 'counter');
  assert.deepEqual(families.get('by_reason_total')!.samples, []);
  inc({ reason: 'idle' });
  families = parsePrometheusText(m.render());
  assert.deepEqual(families.get('by_reason_total')!.samples, [{ name: 'by_reason_total', labels: { reason: 'idle' }, value: 1 }]);
});
