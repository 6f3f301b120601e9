/* sluice status page: plain JavaScript, no framework, no build step.
 *
 * Every data call goes to the service's /v1 API on this origin.  The bearer
 * token is entered once and kept in sessionStorage; over the Unix socket
 * (through a local proxy) the API answers without one, and the page works
 * with an empty token.  Live updates come from the Server-Sent Events
 * streams, read with fetch() and a ReadableStream because EventSource cannot
 * send an Authorization header; a dropped stream resumes with Last-Event-ID.
 */
'use strict';

(function () {
  const TOKEN_KEY = 'sluice.token';
  const STATES = ['ACCEPTED', 'SUBMITTING', 'PENDING', 'RUNNING', 'RETRYING', 'CANCELLING', 'DONE'];
  const LOG_MAX = 256 * 1024; /* characters kept per log pane */
  const STATUS_EVERY_MS = 10000;
  const CONTEXT_MAX = 120; /* characters of an event's context shown */
  /* result codes by name (docs/state-machine.md, "A launch in DONE has a result") */
  const RESULTS = {0: 'SUCCEEDED', 1: 'EXECUTION_ERROR', 9: 'ABORTED', 101: 'WORKLOAD_101',
    102: 'WORKLOAD_102', 103: 'WORKLOAD_103', 104: 'INFRASTRUCTURE_ERROR', 127: 'UNKNOWN'};

  const $ = (id) => document.getElementById(id);
  const launches = new Map(); /* keyOf(summary) -> summary */
  let token = sessionStorage.getItem(TOKEN_KEY) || '';
  let needToken = false;
  let selected = null; /* {id, ctl: AbortController, events: Map seq -> event, terminal} */
  let globalStream = null;
  let listLoadedAt = 0;
  let refreshTimers = new Map();

  /* ---- helpers -------------------------------------------------------- */

  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }

  function fmtTime(ms) {
    if (ms === undefined || ms === null) return '';
    const d = new Date(ms);
    const pad = (n) => String(n).padStart(2, '0');
    return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ` +
      `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
  }

  /* "SUCCEEDED 0": the result's name beside its code */
  function fmtResult(code) {
    if (code === null || code === undefined) return '';
    return `${RESULTS[code] || 'result'} ${code}`;
  }

  /* a figure in ms with its unit: 0.2 ms, 3,319.6 ms, 9.1 s */
  function fmtMs(ms) {
    if (ms === null || ms === undefined) return 'unknown';
    if (ms >= 10000) return `${(ms / 1000).toLocaleString('en-US', {maximumFractionDigits: 1})} s`;
    return `${Number(ms).toLocaleString('en-US', {maximumFractionDigits: 1})} ms`;
  }

  function fmtDuration(s) {
    if (s === null || s === undefined) return 'unknown';
    if (s < 120) return `${s} s`;
    if (s < 7200) return `${Math.floor(s / 60)} min`;
    if (s < 172800) return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`;
    return `${Math.floor(s / 86400)} d`;
  }

  function showMessage(text, isError) {
    const m = $('message');
    if (!text) {
      m.hidden = true;
      return;
    }
    m.textContent = text;
    m.className = isError ? 'message error' : 'message';
    m.hidden = false;
  }

  function headers(extra) {
    const h = Object.assign({}, extra || {});
    if (token) h.Authorization = 'Bearer ' + token;
    return h;
  }

  class ApiError extends Error {
    constructor(status, problem) {
      super((problem && (problem.detail || problem.title)) || `HTTP ${status}`);
      this.status = status;
      this.problem = problem;
    }
  }

  async function api(path, opts) {
    const o = Object.assign({ cache: 'no-store' }, opts || {});
    o.headers = headers(o.headers);
    const r = await fetch(path, o);
    if (r.status === 401) {
      askToken(token ? 'The token was refused: enter another one.' : 'Enter an API token.');
      throw new ApiError(401, null);
    }
    if (!r.ok) {
      let problem = null;
      try { problem = await r.json(); } catch (e) { /* not JSON */ }
      throw new ApiError(r.status, problem);
    }
    return r;
  }

  async function apiJson(path) {
    return (await api(path)).json();
  }

  /* ---- token ---------------------------------------------------------- */

  function askToken(why) {
    needToken = true;
    showMessage(why, true);
    $('token-input').focus();
  }

  function setToken(t) {
    token = t;
    if (t) sessionStorage.setItem(TOKEN_KEY, t);
    else sessionStorage.removeItem(TOKEN_KEY);
    $('token-input').value = '';
    $('token-input').placeholder = t ? 'token set' : 'bearer token';
    start();
  }

  /* ---- health --------------------------------------------------------- */

  function chip(id, text, cls, title) {
    const c = $(id);
    c.textContent = text;
    c.className = 'chip' + (cls ? ' ' + cls : '');
    if (title !== undefined) c.title = title;
  }

  async function loadStatus() {
    let st;
    try {
      st = await apiJson('/v1/status');
    } catch (e) {
      if (e.status !== 401) chip('h-rest', 'status: ' + e.message, 'bad');
      return;
    }
    const rest = st.slurmrestd || {};
    chip('h-rest', 'slurmrestd: ' + (rest.state === 'ok' ? 'reachable' : rest.state),
      rest.state === 'ok' ? 'ok' : (rest.state === 'failed' ? 'bad' : ''),
      rest.detail || 'slurmrestd answered a ping');
    const ttl = st.token ? st.token.expires_in_s : null;
    chip('h-token', 'token expires in ' + fmtDuration(ttl),
      ttl === null || ttl === undefined ? '' : (ttl < 60 ? 'bad' : (ttl < 3600 ? 'warn' : 'ok')));
    const p = st.poll || {};
    if (p.last_cycle_ms === null || p.last_cycle_ms === undefined) {
      chip('h-poll', 'poll: no cycle yet', '');
    } else {
      /* stalled: no cycle ended for 5 intervals (at least a minute); slow:
       * the newest cycle took over 5 s */
      const stalled = p.since_last_cycle_ms > Math.max(60000, 5 * (p.interval_ms || 0));
      chip('h-poll', `poll cycle ${p.last_cycle_ms} ms (average ${fmtMs(p.avg_cycle_ms)}, ` +
        `longest ${fmtMs(p.max_cycle_ms)})`,
        stalled ? 'bad' : (p.last_cycle_ms > 5000 ? 'warn' : 'ok'),
        `${p.cycles} cycles, ${p.errors} with errors; the newest ended ${Math.round(p.since_last_cycle_ms / 1000)} s ago;` +
        ` next poll within ${p.interval_ms} ms`);
    }
    $('h-version').textContent = 'sluice ' + st.version;
    const sel = $('f-state');
    for (const s of Object.keys(st.launches || {})) {
      if (![...sel.options].some((o) => o.value === s)) sel.append(new Option(s, s));
    }
  }

  /* ---- launches list -------------------------------------------------- */

  /* A launch's name in this page: its key (docs/api.md, "Tenants"): the
   * launch_id, or "<tenant>~<launch_id>" for a tenant's launch, since an
   * admin sees launches of several tenants that may share a launch_id. */
  function keyOf(o) {
    return o.tenant ? o.tenant + '~' + o.launch_id : o.launch_id;
  }

  /* The launch_id, and its tenant beside it when it has one. */
  function nameOf(o) {
    return o.tenant ? `${o.launch_id} (${o.tenant})` : o.launch_id;
  }

  function matches(l) {
    const fs = $('f-state').value, fsite = $('f-site').value;
    const text = $('f-text').value.trim().toLowerCase();
    if (fs && l.state !== fs) return false;
    if (fsite && l.site !== fsite) return false;
    if (text) {
      const hay = [l.launch_id, l.tenant, l.study, l.reason, l.site, l.state, (l.job_ids || []).join(' ')]
        .filter((x) => x !== null && x !== undefined).join(' ').toLowerCase();
      if (!hay.includes(text)) return false;
    }
    return true;
  }

  function resultCell(l) {
    const td = el('td');
    if (l.result_code === null || l.result_code === undefined) {
      td.textContent = '';
    } else {
      td.textContent = fmtResult(l.result_code);
      td.className = l.result_code === 0 ? 'result-ok' : 'result-bad';
      if (l.reason) td.title = l.reason;
    }
    return td;
  }

  /* Time since a live launch last changed (its updated_ms); empty once it
   * ended. */
  function sinceCell(l) {
    if (l.terminal || !l.updated_ms) return '';
    return fmtDuration(Math.max(0, Math.floor((Date.now() - l.updated_ms) / 1000)));
  }

  function renderList() {
    const body = $('launches').tBodies[0];
    const rows = [...launches.values()].filter(matches)
      .sort((a, b) => (b.created_ms - a.created_ms) || (keyOf(a) < keyOf(b) ? -1 : 1));
    const frag = document.createDocumentFragment();
    for (const l of rows) {
      const tr = el('tr');
      tr.dataset.id = keyOf(l);
      if (selected && selected.id === keyOf(l)) tr.className = 'selected';
      tr.append(el('td', 'mono', nameOf(l)), el('td', 'state state-' + l.state, l.state),
        resultCell(l), el('td', '', l.site), el('td', 'mono', (l.job_ids || []).join(', ')),
        el('td', 'dim reason', l.reason || ''), el('td', 'dim', sinceCell(l)),
        el('td', 'dim', fmtTime(l.updated_ms)));
      frag.append(tr);
    }
    body.replaceChildren(frag);
    $('empty').hidden = rows.length > 0;
    $('count').textContent = `${rows.length} of ${launches.size}`;
    const sites = $('f-site');
    for (const s of new Set([...launches.values()].map((l) => l.site))) {
      if (s && ![...sites.options].some((o) => o.value === s)) sites.append(new Option(s, s));
    }
  }

  async function loadLaunches() {
    let cursor = null, rv = null, pages = 0;
    const seen = new Map();
    do {
      const q = '/v1/launches?limit=1000' + (cursor ? '&cursor=' + encodeURIComponent(cursor) : '');
      const page = await apiJson(q);
      for (const l of page.items || []) seen.set(keyOf(l), l);
      if (rv === null && typeof page.resource_version === 'number') rv = page.resource_version;
      cursor = page.next_cursor;
      pages++;
    } while (cursor && pages < 20);
    launches.clear();
    for (const [k, v] of seen) launches.set(k, v);
    listLoadedAt = Date.now();
    renderList();
    return rv;
  }

  /* A launch changed: read its summary again (one GET per launch per 300 ms). */
  function refreshLaunch(id) {
    if (refreshTimers.has(id)) return;
    refreshTimers.set(id, setTimeout(async () => {
      refreshTimers.delete(id);
      try {
        const l = await apiJson('/v1/launches/' + encodeURIComponent(id));
        const detail = l;
        const summary = Object.assign({}, l);
        delete summary.events;
        delete summary.request;
        launches.set(id, summary);
        renderList();
        if (selected && selected.id === id) renderDetail(detail);
      } catch (e) {
        if (e.status === 404) {
          launches.delete(id);
          renderList();
        }
      }
    }, 300));
  }

  /* ---- Server-Sent Events over fetch ---------------------------------- */

  /* Read an SSE response body frame by frame; onEvent({id, event, data}). */
  async function readSse(resp, onEvent) {
    const reader = resp.body.getReader();
    const dec = new TextDecoder();
    let buf = '';
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buf += dec.decode(value, { stream: true }).replace(/\r\n?/g, '\n');
      let cut;
      while ((cut = buf.indexOf('\n\n')) >= 0) {
        const frame = buf.slice(0, cut);
        buf = buf.slice(cut + 2);
        const msg = { id: null, event: 'message', data: [] };
        for (const line of frame.split('\n')) {
          if (line === '' || line.startsWith(':')) continue;
          const colon = line.indexOf(':');
          const field = colon < 0 ? line : line.slice(0, colon);
          let val = colon < 0 ? '' : line.slice(colon + 1);
          if (val.startsWith(' ')) val = val.slice(1);
          if (field === 'id') msg.id = val;
          else if (field === 'event') msg.event = val;
          else if (field === 'data') msg.data.push(val);
        }
        if (msg.data.length) onEvent({ id: msg.id, event: msg.event, data: msg.data.join('\n') });
      }
    }
  }

  /* Follow `path` as an event stream for as long as `ctl` is not aborted,
   * resuming after a drop with Last-Event-ID.  `first` is the query that
   * starts it (e.g. after=N); `done()` true ends it for good. */
  function follow(path, ctl, onEvent, opts) {
    let lastId = opts.after !== null && opts.after !== undefined ? String(opts.after) : null;
    let delay = 500;
    const loop = async () => {
      while (!ctl.signal.aborted) {
        const h = lastId !== null ? { 'Last-Event-ID': lastId } : {};
        let q = path;
        if (lastId === null && opts.firstQuery) q += (q.includes('?') ? '&' : '?') + opts.firstQuery;
        try {
          const r = await api(q, { headers: Object.assign({ Accept: 'text/event-stream' }, h), signal: ctl.signal });
          if (opts.onOpen) opts.onOpen();
          delay = 500;
          await readSse(r, (m) => {
            if (m.id !== null) lastId = m.id;
            let ev;
            try { ev = JSON.parse(m.data); } catch (e) { return; }
            onEvent(ev, m);
          });
          if (opts.done && opts.done()) return;
        } catch (e) {
          if (ctl.signal.aborted) return;
          if (e.status === 401 || (opts.fatal && opts.fatal(e))) {
            if (opts.onFatal) opts.onFatal(e);
            return;
          }
        }
        if (opts.onDrop) opts.onDrop();
        await new Promise((res) => setTimeout(res, delay));
        delay = Math.min(delay * 2, 10000);
      }
    };
    loop();
  }

  function startGlobalStream(rv) {
    if (globalStream) globalStream.abort();
    const ctl = new AbortController();
    globalStream = ctl;
    const useRv = typeof rv === 'number';
    follow('/v1/events', ctl, (ev) => {
      /* Without a resource version the stream replays history: events
       * older than the list are already in it. */
      if (!useRv && ev.time < listLoadedAt - 2000) return;
      if (!ev.launch_id) return;
      const key = keyOf(ev);
      if (ev.state && launches.has(key)) {
        const l = launches.get(key);
        if (l.state !== ev.state) {
          l.state = ev.state;
          renderList();
        }
      }
      refreshLaunch(key);
      if (selected && selected.id === key && !selected.ownStream) addEvent(ev);
    }, {
      after: useRv ? rv : null,
      onOpen: () => chip('h-stream', 'live', 'ok', 'following /v1/events'),
      onDrop: () => chip('h-stream', 'reconnecting', 'warn'),
      onFatal: () => chip('h-stream', 'stream: off', ''),
    });
  }

  /* ---- one launch ------------------------------------------------------ */

  function closeDetail() {
    if (selected) selected.ctl.abort();
    selected = null;
    $('detail').hidden = true;
    renderList();
  }

  function ctxText(c) {
    if (c === null || c === undefined) return '';
    if (typeof c === 'string') return c;
    return JSON.stringify(c);
  }

  /* A context cell: the first CONTEXT_MAX characters, all of it on hover. */
  function ctxCell(c) {
    const full = ctxText(c);
    const td = el('td', 'mono context', full.length > CONTEXT_MAX ? full.slice(0, CONTEXT_MAX) + ' …' : full);
    if (full.length > CONTEXT_MAX) td.title = full;
    return td;
  }

  function addEvent(ev) {
    if (!selected || selected.events.has(ev.seq)) return;
    selected.events.set(ev.seq, ev);
    const tr = el('tr');
    tr.dataset.seq = ev.seq;
    tr.append(el('td', 'mono', ev.seq), el('td', 'dim', fmtTime(ev.time)), el('td', 'mono', ev.name),
      el('td', ev.state ? 'state state-' + ev.state : '', ev.state || ''), el('td', 'dim', ev.caller || ''),
      ctxCell(ev.context));
    const body = $('d-events').tBodies[0];
    const after = [...body.rows].find((r) => Number(r.dataset.seq) > ev.seq);
    body.insertBefore(tr, after || null);
  }

  function renderDetail(l) {
    if (!selected || selected.id !== keyOf(l)) return;
    $('d-title').textContent = nameOf(l);
    const dl = $('d-summary');
    const pools = l.request && Array.isArray(l.request.pools)
      ? l.request.pools.map((p) => `${p.name} (${p.nodes} node${p.nodes === 1 ? '' : 's'})`).join(', ') : null;
    const rows = [
      ['state', l.state, 'state state-' + l.state],
      ['result', l.result_code === null || l.result_code === undefined ? '—'
        : `${fmtResult(l.result_code)}${l.reason ? ' (' + l.reason + ')' : ''}`, ''],
      ['reason', l.reason || '—', ''],
      ['site', l.site, ''], ['study', l.study || '—', ''], ['pools', pools || '—', ''],
      ['Slurm job ids', (l.job_ids || []).join(', ') || '—', 'mono'],
      ['attempt', l.attempt, ''], ['created', `${fmtTime(l.created_ms)} by ${l.created_by || '?'}`, ''],
      ['updated', fmtTime(l.updated_ms), ''],
    ];
    dl.replaceChildren(...rows.flatMap(([k, v, c]) => [el('dt', '', k), el('dd', c, v)]));
    const cb = $('d-components').tBodies[0];
    cb.replaceChildren(...(l.components || []).map((c) => {
      const tr = el('tr');
      tr.append(el('td', '', c.component), el('td', 'mono', c.job_id), el('td', 'mono', c.nodelist || '—'),
        el('td', 'mono', (c.nodes || []).map((n) => `${n.name}=${n.address || '?'}`).join(' ')),
        el('td', 'dim', c.state_description || c.state_reason || ''));
      return tr;
    }));
    if (Array.isArray(l.events)) for (const ev of l.events) addEvent(ev);
    selected.terminal = !!l.terminal;
  }

  function followLog(stream) {
    const sel = selected;
    const pre = $('d-' + stream), label = $('d-' + stream + '-state');
    let offset = 0;
    pre.textContent = '';
    const loop = async () => {
      let delay = 500;
      while (!sel.ctl.signal.aborted) {
        label.textContent = 'following';
        try {
          const r = await api(`/v1/launches/${encodeURIComponent(sel.id)}/logs/${stream}?follow=true&offset=${offset}`,
            { signal: sel.ctl.signal });
          const reader = r.body.getReader();
          const dec = new TextDecoder();
          for (;;) {
            const { value, done } = await reader.read();
            if (done) break;
            offset += value.length;
            let t = pre.textContent + dec.decode(value, { stream: true });
            if (t.length > LOG_MAX) t = t.slice(t.length - LOG_MAX);
            const atEnd = pre.scrollTop + pre.clientHeight >= pre.scrollHeight - 4;
            pre.textContent = t;
            if (atEnd) pre.scrollTop = pre.scrollHeight;
          }
          if (sel.terminal) {
            label.textContent = offset ? `(${offset} bytes, ended)` : '(empty)';
            return;
          }
        } catch (e) {
          if (sel.ctl.signal.aborted) return;
          if (e.status === 401 || e.status === 404 || e.status === 409 || e.status === 410) {
            label.textContent = e.message;
            return;
          }
        }
        await new Promise((res) => setTimeout(res, delay));
        delay = Math.min(delay * 2, 5000);
      }
    };
    loop();
  }

  async function openLaunch(id) {
    if (selected) selected.ctl.abort();
    selected = { id, ctl: new AbortController(), events: new Map(), terminal: false, ownStream: false };
    const sel = selected;
    $('d-events').tBodies[0].replaceChildren();
    $('d-components').tBodies[0].replaceChildren();
    $('d-summary').replaceChildren();
    $('d-title').textContent = id;
    $('detail').hidden = false;
    renderList();
    let l;
    try {
      l = await apiJson('/v1/launches/' + encodeURIComponent(id));
    } catch (e) {
      $('d-title').textContent = `${id}: ${e.message}`;
      return;
    }
    if (sel !== selected) return;
    renderDetail(l);
    /* The per-launch stream from the launch's resource version when the
     * service has one; else this launch's events from the global stream. */
    if (typeof l.resource_version === 'number') {
      sel.ownStream = true;
      follow(`/v1/launches/${encodeURIComponent(id)}/events`, sel.ctl, (ev) => {
        addEvent(ev);
        refreshLaunch(id);
      }, {
        after: l.resource_version,
        done: () => sel.terminal,
        fatal: (e) => e.status === 404,
      });
    }
    followLog('stdout');
    followLog('stderr');
  }

  function route() {
    const m = location.hash.match(/^#\/launch\/(.+)$/);
    if (m) {
      const id = decodeURIComponent(m[1]);
      if (!selected || selected.id !== id) openLaunch(id);
    } else if (selected) {
      closeDetail();
    }
  }

  /* ---- start ---------------------------------------------------------- */

  let statusTimer = null;

  async function start() {
    needToken = false;
    showMessage('');
    let rv;
    try {
      rv = await loadLaunches();
    } catch (e) {
      if (e.status !== 401) showMessage('Could not list launches: ' + e.message, true);
      return;
    }
    loadStatus();
    if (statusTimer) clearInterval(statusTimer);
    statusTimer = setInterval(() => { if (!needToken) loadStatus(); }, STATUS_EVERY_MS);
    startGlobalStream(rv);
    route();
  }

  document.addEventListener('DOMContentLoaded', () => {
    const sel = $('f-state');
    for (const s of STATES) sel.append(new Option(s, s));
    for (const id of ['f-state', 'f-site']) $(id).addEventListener('change', renderList);
    $('f-text').addEventListener('input', renderList);
    $('launches').tBodies[0].addEventListener('click', (e) => {
      const tr = e.target.closest('tr');
      if (tr && tr.dataset.id) location.hash = '#/launch/' + encodeURIComponent(tr.dataset.id);
    });
    $('d-close').addEventListener('click', (e) => {
      e.preventDefault();
      location.hash = '';
    });
    $('token-form').addEventListener('submit', (e) => {
      e.preventDefault();
      setToken($('token-input').value.trim());
    });
    $('token-forget').addEventListener('click', () => setToken(''));
    $('token-input').placeholder = token ? 'token set' : 'bearer token';
    window.addEventListener('hashchange', route);
    start();
  });
})();
