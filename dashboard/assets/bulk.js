// bulk.js creates many links at once through POST /v1/links/bulk: one
// destination a line, an optional alias after it.
import { html, useState } from './vendor/htm-preact-standalone.js';
import { call } from './api.js';
import { Message, CopyButton, CopyAsCurl, count } from './ui.js';

const MAX = 1000; // links a request, as the API takes

// parseLines turns the text into link bodies, one a non-empty line: the
// destination, then after spaces or a comma an optional alias. A
// destination holding a space or a comma must write it %20 or %2C. A line
// of more than two parts (https://example.com/?ids=1,2,3, a URL with an
// unencoded space) is listed in extra, not guessed at: read as a URL and
// an alias, it would make a link to a cut destination.
export function parseLines(text) {
  const links = [];
  const lines = [];
  const extra = [];
  text.split('\n').forEach((raw, i) => {
    const line = raw.trim();
    if (!line) return;
    const parts = line.split(/[\s,]+/).filter(Boolean);
    if (parts.length > 2) extra.push(i + 1);
    const [dest, alias] = parts;
    const body = { destination_url: dest };
    if (alias) body.alias = alias;
    links.push(body);
    lines.push(i + 1);
  });
  return { links, lines, extra };
}

// problemText is what a refused line shows: the problem's detail and its
// fields' messages.
function problemText(p) {
  const fields = (p.errors || []).map(e => e.field + ': ' + e.message);
  return fields.length ? fields.join('; ') : p.detail;
}

// BulkCreate is the form; onCreated gets the links created by a submit.
export function BulkCreate({ onCreated }) {
  const [text, setText] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState(null);
  const [results, setResults] = useState(null);
  const { links, lines, extra } = parseLines(text);

  const submit = async e => {
    e.preventDefault();
    setError(null);
    setResults(null);
    if (links.length === 0) { setError(new Error('Enter at least one destination URL, one a line.')); return; }
    if (links.length > MAX) { setError(new Error('At most ' + MAX + ' links at once: this has ' + links.length + '. Split them.')); return; }
    if (extra.length) {
      const shown = extra.slice(0, 10).join(', ') + (extra.length > 10 ? ' and ' + (extra.length - 10) + ' more' : '');
      setError(new Error((extra.length === 1 ? 'Line ' + shown + ' holds' : 'Lines ' + shown + ' hold') + ' more than a destination and an alias: write a space or a comma inside a URL as %20 or %2C. Nothing was sent.'));
      return;
    }
    setBusy(true);
    try {
      const r = await call('POST', '/v1/links/bulk', { links });
      setResults({ data: r.data, meta: r.meta, lines, links });
      const created = r.data.filter(d => d.link).map(d => d.link);
      if (created.length && onCreated) onCreated(created);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };

  return html`<section aria-labelledby="bulk-create" class="card">
    <h2 id="bulk-create">Create many links</h2>
    <form id="bulk-form" onSubmit=${submit} novalidate>
      <div class="field">
        <label for="bulk-lines">Destinations, one a line</label>
        <textarea id="bulk-lines" name="lines" rows="8" aria-describedby="bulk-hint" placeholder=${'https://example.com/spring spring-sale\nhttps://example.com/summer'}
          value=${text} onInput=${e => setText(e.target.value)}></textarea>
        <small id="bulk-hint" class="hint">One destination URL a line, up to ${MAX}. To choose a line's alias, write it after the URL, separated by a space or a comma; without one a code is made up. Write a space or a comma inside a URL as %20 or %2C. Each line is created or refused on its own.</small>
      </div>
      <${Message} error=${error} />
      <div class="actions"><button type="submit" disabled=${busy}>${busy ? 'Creating…' : 'Create ' + count(links.length, 'link', 'links')}</button>
      <${CopyAsCurl} method="POST" path="/v1/links/bulk" body=${{ links }} /></div>
    </form>
    ${results ? html`<p role="status" id="bulk-summary">${count(results.meta.created, 'link', 'links')} created, ${results.meta.failed} refused.</p>
      <div class="table-wrap"><table id="bulk-results">
        <thead><tr><th scope="col" class="num">Line</th><th scope="col">Destination</th><th scope="col">Result</th></tr></thead>
        <tbody>${results.data.map(d => html`<tr key=${d.index} class=${d.link ? 'ok' : 'failed'}>
          <td class="num">${results.lines[d.index]}</td>
          <td class="dest" title=${results.links[d.index].destination_url}>${results.links[d.index].destination_url}</td>
          <td>${d.link
            ? html`<a href=${d.link.short_url} target="_blank" rel="noopener noreferrer">${d.link.short_url}</a> <${CopyButton} text=${d.link.short_url} label="Copy" describe=${'Copy short URL ' + d.link.short_url} />`
            : html`<span class="field-error">${problemText(d.error)}</span>`}</td>
        </tr>`)}</tbody>
      </table></div>` : null}
  </section>`;
}
