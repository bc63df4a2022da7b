// The episode viewer of the episode-factory HTML report; inlined into every
// report by report-page.ts and run by the browser, never by Node. It parses
// the small index at load, filters and lists episodes, and parses an
// episode's JSON block only when one is opened. Record text is untrusted
// (a model wrote some of it): it only ever reaches the page as textContent.
(function () {
  'use strict';

  var MAX_LISTED = 500;
  var index = JSON.parse(document.getElementById('report-index').textContent);
  var tables = index.tables;
  var blocks = new Map();
  var catalogs = null;

  var entries = index.entries.map(function (row, position) {
    var entry = {
      position: position,
      id: row[0],
      world: tables.worlds[row[1]],
      task: tables.tasks[row[2]],
      policy: tables.policies[row[3]],
      faults: row[4].map(function (kind) { return tables.fault_kinds[kind]; }),
      completed: row[5] === 1,
      outcome: tables.outcomes[row[6]],
      errorTurns: row[7],
      toolCalls: row[8],
      messages: row[9],
      prompt: row[10],
      userTurns: row[11],
      mostCalls: row[12]
    };
    entry.haystack = [entry.id, entry.world, entry.task, entry.policy, entry.outcome, entry.prompt, entry.faults.join(' ')].join('\n').toLowerCase();
    return entry;
  });
  var byId = new Map(entries.map(function (entry) { return [entry.id, entry]; }));

  function episodeAt(position) {
    var number = Math.floor(position / index.per_block);
    if (!blocks.has(number)) {
      blocks.set(number, JSON.parse(document.getElementById('episodes-' + number).textContent));
      // Lets a reader (or a test) see that opening an episode parsed one block, not all.
      document.documentElement.setAttribute('data-parsed-blocks', String(blocks.size));
    }
    return blocks.get(number)[position % index.per_block];
  }

  function catalog(number) {
    if (catalogs === null) catalogs = JSON.parse(document.getElementById('report-catalogs').textContent);
    return catalogs[number] || [];
  }

  /** Builds an element; strings become text nodes, so nothing in a record is ever parsed as markup. */
  function el(tag, attributes) {
    var node = document.createElement(tag);
    if (attributes) {
      Object.keys(attributes).forEach(function (name) {
        var value = attributes[name];
        if (value === null || value === undefined || value === false) return;
        if (name === 'text') node.textContent = value;
        else if (name === 'className') node.className = value;
        else node.setAttribute(name, value === true ? '' : String(value));
      });
    }
    for (var i = 2; i < arguments.length; i++) {
      var child = arguments[i];
      if (child === null || child === undefined || child === false) continue;
      node.appendChild(typeof child === 'string' ? document.createTextNode(child) : child);
    }
    return node;
  }

  function counted(number, noun) {
    return number + ' ' + noun + (number === 1 ? '' : 's');
  }

  function pretty(text) {
    try {
      return JSON.stringify(JSON.parse(text), null, 2);
    } catch (error) {
      return text;
    }
  }

  var controls = {
    text: document.getElementById('filter-text'),
    world: document.getElementById('filter-world'),
    task: document.getElementById('filter-task'),
    policy: document.getElementById('filter-policy'),
    fault: document.getElementById('filter-fault'),
    completed: document.getElementById('filter-completed')
  };
  var list = document.getElementById('episode-list');
  var detail = document.getElementById('episode-detail');
  var count = document.getElementById('match-count');
  var selectedId = null;

  function matches(entry, filter) {
    if (filter.world && entry.world !== filter.world) return false;
    if (filter.task && entry.task !== filter.task) return false;
    if (filter.policy && entry.policy !== filter.policy) return false;
    if (filter.completed === 'yes' && !entry.completed) return false;
    if (filter.completed === 'no' && entry.completed) return false;
    if (filter.fault === '*' && entry.faults.length === 0) return false;
    if (filter.fault === '-' && entry.faults.length > 0) return false;
    if (filter.fault && filter.fault !== '*' && filter.fault !== '-' && entry.faults.indexOf(filter.fault) < 0) return false;
    if (filter.words.length > 0) {
      for (var i = 0; i < filter.words.length; i++) if (entry.haystack.indexOf(filter.words[i]) < 0) return false;
    }
    return true;
  }

  function currentFilter() {
    return {
      words: controls.text.value.toLowerCase().split(/\s+/).filter(Boolean),
      world: controls.world.value,
      task: controls.task.value,
      policy: controls.policy.value,
      fault: controls.fault.value,
      completed: controls.completed.value
    };
  }

  function entryItem(entry) {
    var badges = el('div', { className: 'entry-meta' },
      el('span', { className: 'badge ' + (entry.completed ? 'completed' : 'failed'), text: entry.completed ? 'completed' : 'not completed' }),
      entry.faults.length > 0 ? el('span', { className: 'badge fault', text: entry.faults.join(', ') }) : null,
      entry.errorTurns > 0 ? el('span', { className: 'badge error', text: counted(entry.errorTurns, 'error turn') }) : null,
      entry.mostCalls > 1 ? el('span', { className: 'badge calls', text: 'up to ' + entry.mostCalls + ' calls a turn' }) : null,
      entry.userTurns > 0 ? el('span', { className: 'badge simulated', text: counted(entry.userTurns, 'simulated user turn') }) : null
    );
    var button = el('button', { type: 'button', 'data-record-id': entry.id },
      el('div', { className: 'entry-id', text: entry.id }),
      el('div', { className: 'entry-meta', text: entry.task + ' · ' + entry.policy + ' · ' + counted(entry.toolCalls, 'tool call') }),
      badges
    );
    button.addEventListener('click', function () { open(entry.id); });
    var item = el('li', { 'data-record-id': entry.id, className: entry.id === selectedId ? 'selected' : null }, button);
    return item;
  }

  function applyFilter() {
    var filter = currentFilter();
    var matched = entries.filter(function (entry) { return matches(entry, filter); });
    list.textContent = '';
    var fragment = document.createDocumentFragment();
    matched.slice(0, MAX_LISTED).forEach(function (entry) { fragment.appendChild(entryItem(entry)); });
    if (matched.length > MAX_LISTED) {
      fragment.appendChild(el('li', { className: 'more', text: 'and ' + (matched.length - MAX_LISTED) + ' more: narrow the search or the filters to list them' }));
    }
    if (matched.length === 0) fragment.appendChild(el('li', { className: 'more', text: 'No episode matches these filters.' }));
    list.appendChild(fragment);
    count.textContent = matched.length + ' of ' + entries.length + ' episodes';
    count.setAttribute('data-matches', String(matched.length));
  }

  /** Calls the harness refused before they reached the server: the fault layer never saw them, so they have no call number. */
  var REFUSED = ['invalid_arguments', 'unknown_tool', 'tool_call_limit', 'malformed_tool_call'];

  /**
   * Where each fault is shown: on the tool message it hit, or, for one that no
   * tool message carries (a catalog listing, a turn that never came back), as
   * a notice. A fault's `call` counts the calls that reached the server, from
   * 1, across the episode; a turn may make several, so the step alone does not
   * say which result was hit. Without a match, the first result of its turn.
   */
  function placeFaults(record) {
    var results = [];
    var turn = 0;
    var reached = 0;
    record.messages.forEach(function (message, index) {
      if (message.role === 'assistant') turn += 1;
      if (message.role !== 'tool') return;
      var counted = message.tool_call_id !== null && REFUSED.indexOf(message.tool_result.kind) < 0;
      if (counted) reached += 1;
      results.push({ index: index, turn: turn, call: counted ? reached : null, tool: message.name });
    });
    var byMessage = new Map();
    var notices = [];
    record.recovery.faults_fired.forEach(function (fault) {
      var inTurn = fault.step > 0 ? results.filter(function (result) { return result.turn === fault.step; }) : [];
      var hit = inTurn.filter(function (result) { return fault.call !== null && result.call === fault.call; })[0] ||
        inTurn.filter(function (result) { return result.tool === fault.tool; })[0] || inTurn[0];
      if (!hit) {
        notices.push(fault);
        return;
      }
      if (!byMessage.has(hit.index)) byMessage.set(hit.index, []);
      byMessage.get(hit.index).push(fault);
    });
    return { byMessage: byMessage, notices: notices };
  }

  function faultNote(fault) {
    return el('p', { className: 'fault-note' },
      el('span', { className: 'badge fault', text: 'injected fault' }),
      // `call` counts the calls that reached the server, not the call ids the policy saw.
      fault.kind + ' (' + fault.fault + ')' + (fault.call !== null ? ', server call ' + fault.call : '') + ': ' + fault.detail
    );
  }

  function assistantMessage(message, turn) {
    var calls = message.tool_calls || [];
    var node = el('div', { className: 'message assistant', 'data-turn': turn, 'data-calls': calls.length },
      el('div', { className: 'role', text: 'assistant · turn ' + turn + (calls.length > 1 ? ' · ' + calls.length + ' tool calls' : '') }),
      message.content ? el('div', { className: 'text', text: message.content }) : null
    );
    calls.forEach(function (call, position) {
      node.appendChild(el('div', { className: 'tool-call', 'data-tool': call.name, 'data-call-id': call.id },
        el('div', null, calls.length > 1 ? 'tool call ' + (position + 1) + ' of ' + calls.length + ' ' : 'tool call ', el('span', { className: 'call-name', text: call.name }), ' ', el('code', { text: call.id })),
        el('pre', { className: 'arguments', text: pretty(call.arguments) })
      ));
    });
    if (message.malformed_tool_call) {
      node.appendChild(el('div', { className: 'malformed', text: 'malformed tool call: ' + message.malformed_tool_call.reason }));
    }
    return node;
  }

  function toolMessage(message, faults) {
    var result = message.tool_result;
    var classes = 'message tool' + (result.ok ? ' ok' : ' not-ok') + (faults.length > 0 ? ' faulted' : '');
    var node = el('div', { className: classes, 'data-tool': message.name || '', 'data-ok': String(result.ok), 'data-call-id': message.tool_call_id === null ? null : message.tool_call_id },
      el('div', { className: 'role' },
        'tool result · ' + (message.name || 'unknown tool') + ' · ',
        message.tool_call_id === null ? 'the harness’s reply to a malformed call' : el('code', { className: 'answers', text: message.tool_call_id }))
    );
    faults.forEach(function (fault) { node.appendChild(faultNote(fault)); });
    if (!result.ok) {
      var note = el('div', { className: 'error-note' },
        el('span', { className: 'badge error', text: 'ok:false' }),
        (result.kind || 'error') + (result.code !== undefined ? ' (code ' + result.code + ')' : '') + ': ' + (result.error || '')
      );
      if (result.errors && result.errors.length > 0) {
        note.appendChild(el('ul', null, ...result.errors.map(function (error) { return el('li', null, el('code', { text: error.path || '/' }), ' ' + error.reason); })));
      }
      node.appendChild(note);
    }
    node.appendChild(el('pre', { className: 'content', text: pretty(message.content) }));
    return node;
  }

  /** `scripted-user 1 (scripted)`, or a model with its digest: who wrote the user turns after the first. */
  function userActor(record) {
    var actor = record.provenance.actors.filter(function (each) { return each.role === 'user'; })[0];
    if (!actor) return 'no user simulator in provenance';
    return actor.name + ' ' + actor.version + ' (' + actor.kind + ')' + (typeof actor.digest === 'string' ? ' @' + actor.digest.slice(0, 19) : '');
  }

  function userMessage(message, opening, actor) {
    if (opening) {
      return el('div', { className: 'message user', 'data-user': 'opening' }, el('div', { className: 'role', text: 'user · the task’s request' }), el('div', { className: 'text', text: message.content }));
    }
    // Not the task's user: a simulator's reply, which a trainer masks like the request.
    return el('div', { className: 'message user simulated', 'data-user': 'simulated', 'data-actor': actor },
      el('div', { className: 'role' }, el('span', { className: 'badge simulated', text: 'user simulator' }), el('span', { className: 'actor', text: actor })),
      el('div', { className: 'text', text: message.content })
    );
  }

  function chat(record) {
    var faults = placeFaults(record);
    var actor = userActor(record);
    var container = el('div', { className: 'chat' });
    faults.notices.filter(function (fault) { return fault.step === 0; }).forEach(function (fault) {
      container.appendChild(el('div', { className: 'message notice' }, el('div', { className: 'role', text: 'before the first turn' }), faultNote(fault)));
    });
    var turn = 0;
    var users = 0;
    record.messages.forEach(function (message, index) {
      if (message.role === 'system') {
        container.appendChild(el('details', { className: 'message system' }, el('summary', { className: 'role', text: 'system prompt' }), el('div', { className: 'text', text: message.content })));
      } else if (message.role === 'user') {
        users += 1;
        container.appendChild(userMessage(message, users === 1, actor));
      } else if (message.role === 'assistant') {
        turn += 1;
        container.appendChild(assistantMessage(message, turn));
      } else {
        container.appendChild(toolMessage(message, faults.byMessage.get(index) || []));
      }
    });
    faults.notices.filter(function (fault) { return fault.step !== 0; }).forEach(function (fault) {
      container.appendChild(el('div', { className: 'message notice' }, el('div', { className: 'role', text: 'turn ' + fault.step }), faultNote(fault)));
    });
    return container;
  }

  function verdicts(record) {
    var body = el('tbody');
    record.result.predicates.forEach(function (predicate) {
      body.appendChild(el('tr', { 'data-predicate': predicate.id, 'data-passed': String(predicate.passed) },
        el('td', null, el('code', { text: predicate.id })),
        el('td', { className: predicate.passed ? 'pass' : 'fail', text: predicate.passed ? 'pass' : 'fail' }),
        el('td', { text: predicate.detail || '' })
      ));
    });
    var parts = [
      el('h3', { text: 'Hidden predicates' }),
      el('p', { className: 'hidden-note', text: 'Judged after the episode, on the final world state of the replay. The policy never saw them.' }),
      el('table', { className: 'verdicts' }, el('thead', null, el('tr', null, el('th', { text: 'predicate' }), el('th', { text: 'verdict' }), el('th', { text: 'detail' }))), body)
    ];
    var claims = record.result.evidence.claims;
    if (claims.length > 0) {
      var claimBody = el('tbody');
      claims.forEach(function (claim) {
        claimBody.appendChild(el('tr', null, el('td', { text: claim.sentence }), el('td', null, el('code', { text: claim.tool })), el('td', { className: claim.supported ? 'pass' : 'fail', text: claim.supported ? 'supported' : 'unsupported' })));
      });
      parts.push(el('h3', { text: 'Claims in the final answer' }));
      parts.push(el('table', { className: 'verdicts claims' }, el('thead', null, el('tr', null, el('th', { text: 'claim' }), el('th', { text: 'tool' }), el('th', { text: 'checked against the calls' }))), claimBody));
    }
    return parts;
  }

  function copyButton(text) {
    var button = el('button', { type: 'button', text: 'Copy' });
    button.addEventListener('click', function () {
      var done = function () { button.textContent = 'Copied'; };
      if (navigator.clipboard && navigator.clipboard.writeText) navigator.clipboard.writeText(text).then(done, function () { button.textContent = 'Select and copy'; });
      else button.textContent = 'Select and copy';
    });
    return button;
  }

  function lineage(record) {
    var lineageFacts = record.provenance.lineage;
    var rows = [
      ['lane', lineageFacts.lane], ['lane sha256', lineageFacts.lane_sha256], ['task', lineageFacts.task], ['seed', String(lineageFacts.seed)],
      ['variant', lineageFacts.variant], ['operation', lineageFacts.operation], ['source record', lineageFacts.source_record_id || '–'],
      ['factory', lineageFacts.factory_version], ['produced at', record.provenance.produced_at],
      ['initial snapshot', record.result.initial_snapshot_sha256], ['final snapshot', record.result.final_snapshot_sha256]
    ];
    // Only a task with a phrasing grammar records which phrasing its message is.
    if (lineageFacts.phrasing) rows.splice(5, 0, ['phrasing', lineageFacts.phrasing]);
    record.provenance.actors.forEach(function (actor) {
      var fields = Object.keys(actor).filter(function (key) { return key !== 'role' && typeof actor[key] !== 'object'; }).map(function (key) { return key + ' ' + actor[key]; });
      rows.push(['actor: ' + actor.role, fields.join(', ')]);
    });
    var body = el('tbody');
    rows.forEach(function (row) { body.appendChild(el('tr', null, el('th', { scope: 'row', text: row[0] }), el('td', null, el('code', { text: row[1] })))); });
    return el('div', { className: 'lineage' },
      el('h3', { text: 'Lineage' }),
      el('table', null, body),
      el('p', { text: 'Regenerate this episode, then replay it on a fresh world:' }),
      el('div', { className: 'command' }, el('pre', { className: 'generate-command', text: lineageFacts.generate_command }), copyButton(lineageFacts.generate_command)),
      el('div', { className: 'command' }, el('pre', { className: 'replay-command', text: lineageFacts.replay_command }), copyButton(lineageFacts.replay_command))
    );
  }

  function toolCatalog(record) {
    var tools = catalog(record.catalog);
    var node = el('details', { className: 'catalog' }, el('summary', { text: 'Tool catalog the policy saw (' + tools.length + ' tools)' }));
    tools.forEach(function (tool) {
      node.appendChild(el('div', null, el('p', null, el('span', { className: 'tool-name', text: tool.name }), ' ' + tool.description), el('pre', { text: pretty(tool.input_schema) })));
    });
    (record.catalog_updates || []).forEach(function (update) {
      node.appendChild(el('pre', { text: 'catalog update: ' + JSON.stringify(update, null, 2) }));
    });
    return node;
  }

  function faultTable(record) {
    var faults = record.recovery.faults_fired;
    if (faults.length === 0) return el('p', { className: 'hidden-note', text: 'No fault was injected in this episode.' });
    var body = el('tbody');
    faults.forEach(function (fault) {
      body.appendChild(el('tr', { 'data-fault-kind': fault.kind }, el('td', { text: String(fault.step) }), el('td', { text: fault.tool || 'catalog listing' }), el('td', null, el('code', { text: fault.kind })), el('td', { text: fault.fault }), el('td', { text: fault.detail })));
    });
    return el('table', { className: 'faults' }, el('thead', null, el('tr', null, el('th', { text: 'turn' }), el('th', { text: 'tool' }), el('th', { text: 'kind' }), el('th', { text: 'plan entry' }), el('th', { text: 'detail' }))), body);
  }

  function showEpisode(entry) {
    var record = episodeAt(entry.position);
    var result = record.result;
    detail.textContent = '';
    detail.setAttribute('data-record-id', record.record_id);
    detail.appendChild(el('h3', { className: 'episode-title', text: record.task.title }));
    detail.appendChild(el('div', { className: 'episode-facts' },
      el('span', { className: 'badge ' + (result.task_completed ? 'completed' : 'failed'), text: result.task_completed ? 'completed' : 'not completed' }),
      el('code', { text: record.record_id }),
      ' · ' + record.world.name + '@' + record.world.version + ' · ' + entry.policy + ' · outcome ' + result.outcome +
        (result.outcome_detail ? ' (' + result.outcome_detail + ')' : '') + ' · ' + counted(result.steps, 'turn') + ', ' + counted(result.tool_calls, 'tool call') + ', ' +
        result.rejected_calls + ' rejected, ' + counted(record.recovery.error_turns, 'error turn') + (record.recovery.recovered ? ', recovered' : '')
    ));
    detail.appendChild(el('h3', { text: 'Conversation' }));
    detail.appendChild(chat(record));
    verdicts(record).forEach(function (node) { detail.appendChild(node); });
    detail.appendChild(el('h3', { text: 'Faults injected' }));
    detail.appendChild(faultTable(record));
    detail.appendChild(lineage(record));
    detail.appendChild(toolCatalog(record));
    detail.scrollTop = 0;
  }

  function open(id) {
    if (location.hash !== '#episode=' + encodeURIComponent(id)) location.hash = 'episode=' + encodeURIComponent(id);
    else select(id);
  }

  function select(id) {
    var entry = byId.get(id);
    if (!entry) return;
    selectedId = id;
    Array.prototype.forEach.call(list.children, function (item) {
      item.classList.toggle('selected', item.getAttribute('data-record-id') === id);
    });
    // The episode blocks follow this script: until the page is fully read, a block may still be arriving.
    if (document.readyState === 'loading') {
      detail.textContent = '';
      detail.appendChild(el('p', { className: 'placeholder', text: 'Loading ' + id + '…' }));
      document.addEventListener('DOMContentLoaded', function () {
        if (selectedId === id) showEpisode(entry);
      }, { once: true });
      return;
    }
    showEpisode(entry);
  }

  function fromHash() {
    var match = /^#episode=(.+)$/.exec(location.hash);
    if (match) select(decodeURIComponent(match[1]));
  }

  Object.keys(controls).forEach(function (name) {
    controls[name].addEventListener(name === 'text' ? 'input' : 'change', applyFilter);
  });
  document.getElementById('filter-clear').addEventListener('click', function () {
    Object.keys(controls).forEach(function (name) { controls[name].value = ''; });
    applyFilter();
  });

  /** A bar in a chart sets the matching filter and shows the list. */
  function filterFromChart(mark) {
    var control = controls[mark.getAttribute('data-filter')];
    if (!control) return;
    Object.keys(controls).forEach(function (name) { controls[name].value = ''; });
    control.value = mark.getAttribute('data-filter-value');
    applyFilter();
    document.getElementById('episodes').scrollIntoView();
  }
  Array.prototype.forEach.call(document.querySelectorAll('[data-filter]'), function (mark) {
    mark.addEventListener('click', function () { filterFromChart(mark); });
    mark.addEventListener('keydown', function (event) { if (event.key === 'Enter' || event.key === ' ') { event.preventDefault(); filterFromChart(mark); } });
  });

  window.addEventListener('hashchange', fromHash);
  applyFilter();
  fromHash();
  document.documentElement.setAttribute('data-parsed-blocks', String(blocks.size));
  document.documentElement.setAttribute('data-viewer', 'ready');
  // When the list became usable, for the benchmark: the episode blocks below may still be arriving.
  document.documentElement.setAttribute('data-viewer-ready-ms', String(Math.round(performance.now())));
})();
