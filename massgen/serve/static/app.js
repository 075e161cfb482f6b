// The massgen web view: ask a team, follow a run's event stream live, open past runs.
// Every event is the same JSON as `massgen --stream-events` prints. A run is rebuilt
// from its events alone, so a reload replays them and then follows the live stream.
"use strict";

(function () {
  var TOKEN_KEY = "massgen-serve-token";
  var STREAM_CHARS = 1500; // the tail of an agent's current text shown on its card
  var $ = function (id) { return document.getElementById(id); };

  var current = null; // {id, source, state}

  // --- the token ---------------------------------------------------------------------

  function takeTokenFromUrl() {
    var params = new URLSearchParams(location.search);
    var token = params.get("token");
    if (token) {
      sessionStorage.setItem(TOKEN_KEY, token);
      params.delete("token");
      var rest = params.toString();
      history.replaceState(null, "", location.pathname + (rest ? "?" + rest : "") + location.hash);
    }
  }

  function token() { return sessionStorage.getItem(TOKEN_KEY) || ""; }

  function api(path, options) {
    options = options || {};
    var headers = Object.assign({ "Authorization": "Bearer " + token() }, options.headers || {});
    if (options.body) headers["Content-Type"] = "application/json";
    return fetch(path, Object.assign({}, options, { headers: headers })).then(function (response) {
      return response.json().catch(function () { return {}; }).then(function (body) {
        if (!response.ok) {
          var message = (body.error && body.error.message) || response.statusText;
          var error = new Error(message);
          error.status = response.status;
          throw error;
        }
        return body;
      });
    });
  }

  function login() {
    // The cookie this sets is what the EventSource GETs carry (they cannot send headers).
    return api("/api/login", { method: "POST" });
  }

  function showLogin(message) {
    $("main").hidden = true;
    $("login").hidden = false;
    $("login-error").textContent = message || "";
  }

  function enter() {
    return login().then(function () {
      $("login").hidden = true;
      $("main").hidden = false;
      loadTeams();
      loadRuns();
      var wanted = runFromHash();
      if (wanted) openRun(wanted);
    }).catch(function (error) {
      if (error.status === 401) sessionStorage.removeItem(TOKEN_KEY);
      showLogin(error.status === 401 ? "That token is not the server's." : error.message);
    });
  }

  // --- teams and runs ----------------------------------------------------------------

  function loadTeams() {
    api("/v1/models").then(function (body) {
      var select = $("team");
      select.textContent = "";
      body.data.forEach(function (team) {
        var option = document.createElement("option");
        option.value = team.id;
        option.textContent = team.id;
        option.title = team.description || "";
        select.appendChild(option);
      });
    });
  }

  function loadRuns() {
    return api("/api/runs").then(function (body) {
      var list = $("runs");
      list.textContent = "";
      body.runs.forEach(function (run) {
        var item = document.createElement("li");
        item.dataset.run = run.id;
        if (current && current.id === run.id) item.className = "selected";
        var status = document.createElement("span");
        status.className = "badge " + (run.live ? "running" : String(run.status || ""));
        status.textContent = run.live ? "live" : (run.status || "?");
        var question = document.createElement("span");
        question.className = "q";
        question.textContent = run.question || run.id;
        item.append(status, question);
        item.title = run.id;
        item.addEventListener("click", function () { openRun(run.id); });
        list.appendChild(item);
      });
    }).catch(function () {});
  }

  function ask(event) {
    event.preventDefault();
    $("ask-error").textContent = "";
    var question = $("question").value.trim();
    if (!question) return;
    $("ask-button").disabled = true;
    api("/api/runs", { method: "POST", body: JSON.stringify({ question: question, team: $("team").value }) })
      .then(function (body) { openRun(body.id); loadRuns(); })
      .catch(function (error) { $("ask-error").textContent = error.message; })
      .finally(function () { $("ask-button").disabled = false; });
  }

  function runFromHash() {
    var match = /^#run=(.+)$/.exec(location.hash);
    return match ? decodeURIComponent(match[1]) : null;
  }

  // --- one run: its events, replayed then followed -----------------------------------

  function openRun(id) {
    if (current && current.source) current.source.close();
    history.replaceState(null, "", location.pathname + "#run=" + encodeURIComponent(id));
    current = { id: id, source: null, state: newState() };
    $("empty").hidden = true;
    $("run").hidden = false;
    $("agents").textContent = "";
    $("final").hidden = true;
    $("final-answer").textContent = "";
    $("winner").textContent = "";
    $("run-question").textContent = "";
    setStatus("loading");
    Array.prototype.forEach.call($("runs").children, function (li) {
      li.className = li.dataset.run === id ? "selected" : "";
    });
    var mine = current;
    var source = new EventSource("/api/runs/" + encodeURIComponent(id) + "/events");
    mine.source = source;
    source.onmessage = function (message) {
      if (current !== mine) return;
      apply(mine.state, JSON.parse(message.data));
      mine.state.count += 1;
      $("run").dataset.events = String(mine.state.count);
    };
    source.addEventListener("asks", function (message) {
      if (current === mine) showAsks(mine, JSON.parse(message.data).asks);
    });
    source.addEventListener("questions", function (message) {
      if (current === mine) showQuestions(mine, JSON.parse(message.data));
    });
    source.addEventListener("end", function () {
      source.close();
      if (current !== mine) return;
      if (!mine.state.finished) setStatus("interrupted");
      loadRuns();
    });
    source.onerror = function () {
      // EventSource retries by itself (resuming from Last-Event-ID); CLOSED means refused.
      if (source.readyState === EventSource.CLOSED && current === mine && !mine.state.finished) {
        setStatus("unavailable");
      }
    };
  }

  function stopRun() {
    if (!current) return;
    api("/api/runs/" + encodeURIComponent(current.id), { method: "DELETE" }).catch(function () {});
  }

  function setStatus(status) {
    var badge = $("run-status");
    badge.textContent = status;
    badge.className = "badge " + status;
    $("run").dataset.status = status;
    $("stop").hidden = status !== "running";
  }

  function newState() {
    return { agents: {}, order: [], count: 0, finished: false, finalText: "", winner: null,
      asks: {}, questions: {}, closedQuestions: {} };
  }

  function agentOf(state, id) {
    if (!state.agents[id]) {
      state.agents[id] = { id: id, label: "", card: card(id) };
      state.order.push(id);
    }
    return state.agents[id];
  }

  function el(tag, className, text) {
    var node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined) node.textContent = text;
    return node;
  }

  function card(id) {
    var root = el("article", "agent");
    root.dataset.agent = id;
    var head = el("header");
    var name = el("b", "name", id);
    var label = el("span", "label");
    var state = el("span", "state", "waiting");
    var tokens = el("span", "tokens");
    head.append(name, label, state, tokens);
    var stream = el("pre", "stream");
    var tools = el("ul", "tools");
    var answers = el("div", "answers");
    var votes = el("ul", "votes");
    var asks = el("div", "asks");
    var questions = el("div", "questions");
    var perms = el("ul", "perms");
    root.append(head, asks, questions, stream, tools, perms, answers, votes);
    $("agents").appendChild(root);
    return { root: root, label: label, state: state, tokens: tokens, stream: stream,
      tools: tools, answers: answers, votes: votes, asks: asks, questions: questions,
      perms: perms, text: "", usage: 0, calls: {} };
  }

  function setAgentState(agent, text, kind) {
    agent.card.state.textContent = text;
    agent.card.root.dataset.state = kind;
  }

  function appendStream(agent, text) {
    var c = agent.card;
    c.text = (c.text + text).slice(-STREAM_CHARS);
    c.stream.textContent = c.text;
    c.stream.scrollTop = c.stream.scrollHeight;
  }

  // One event into the view. Unknown types are ignored (a newer server may add some).
  function apply(state, e) {
    var agent = e.agent ? agentOf(state, e.agent) : null;
    switch (e.type) {
      case "run_started":
        $("run-question").textContent = e.question;
        e.agents.forEach(function (id) {
          var a = agentOf(state, id);
          a.label = e.labels[id] || "";
          a.card.label.textContent = a.label;
        });
        setStatus("running");
        break;
      case "agent_started":
        agent.card.text = "";
        agent.card.stream.textContent = "";
        setAgentState(agent, (e.vote_only ? "voting" : "working") + " · run " + e.run, "working");
        break;
      case "text":
      case "reasoning":
        appendStream(agent, e.text);
        break;
      case "tool_call_started": {
        var item = el("li", "tool running", e.name + "(" + e.arguments.slice(0, 120) + ")");
        agent.card.calls[e.call_id] = item;
        agent.card.tools.appendChild(item);
        break;
      }
      case "tool_call_progress": {
        // The latest line of a running call, under its name; its result replaces it.
        var running = agent.card.calls[e.call_id];
        if (!running || running.className !== "tool running") break;
        var progress = running.querySelector(".progress") || running.appendChild(el("div", "progress"));
        progress.textContent = e.message.slice(0, 300);
        break;
      }
      case "tool_call_finished": {
        var call = agent.card.calls[e.call_id] || el("li", "tool", e.name);
        var shown = call.querySelector(".progress");
        if (shown) shown.remove();
        call.className = "tool " + (e.ok ? "ok" : "failed");
        call.title = e.result.slice(0, 2000);
        if (!call.parentNode) agent.card.tools.appendChild(call);
        break;
      }
      case "permission_decided":
        showDecision(agent, e);
        break;
      case "tool_source_failed":
        agent.card.tools.appendChild(el("li", "tool failed", e.source + ": " + e.error));
        break;
      case "agent_warning":
        agent.card.tools.appendChild(el("li", "tool failed", "⚠ " + e.message));
        break;
      case "subagent_finished": {
        var child = el("li", "tool " + (e.outcome === "completed" ? "ok" : "failed"),
          "subagent " + e.subagent + ": " + e.outcome);
        child.title = (e.answer || e.reason).slice(0, 2000);
        agent.card.tools.appendChild(child);
        break;
      }
      case "persona_assigned":
        agent.card.tools.appendChild(el("li", "tool", "persona: " + (e.summary || e.persona)));
        break;
      case "criteria_generated": {
        var criteria = el("li", "tool", "evaluation criteria for the team (" + e.criteria.length + ")");
        criteria.title = e.criteria.join("\n");
        agent.card.tools.appendChild(criteria);
        break;
      }
      case "question_paraphrased":
        agent.card.tools.appendChild(el("li", "tool", "reads the question as: " + e.paraphrase.slice(0, 200)));
        break;
      case "generator_failed":
        agent.card.tools.appendChild(el("li", "tool failed", e.what + " not generated: " + e.error));
        break;
      case "broadcast_asked":
        agent.card.tools.appendChild(said("asked", e, "asks " + whom(e.to) + ": ", e.question));
        break;
      case "broadcast_answered":
        agent.card.tools.appendChild(said(e.ok ? "answered" : "unanswered", e,
          e.ok ? whom([e.responder]) + " answers: " : "no answer from " + whom([e.responder]) + ": ",
          e.answer));
        break;
      case "answer_published": {
        var details = el("details", "answer");
        details.dataset.label = e.label;
        details.append(el("summary", null, "answer " + e.label), el("pre", null, e.content));
        agent.card.answers.appendChild(details);
        setAgentState(agent, "answered " + e.label, "answered");
        break;
      }
      case "answer_checked": {
        var what = e.phase === "presentation" ? "the final answer" : e.label;
        var verdict = e.verdict + (e.note ? " (" + e.note + ")" : "");
        var check = el("li", e.verdict === "passed" ? "tool" : "tool failed", "check of " + what + ": " + verdict);
        check.title = e.excerpt;
        agent.card.tools.appendChild(check);
        break;
      }
      case "vote_cast": {
        var vote = el("li", "vote", "voted " + e.target + " (" + e.target_label + "): " + e.reason);
        vote.dataset.target = e.target_label;
        agent.card.votes.appendChild(vote);
        setAgentState(agent, "voted " + e.target_label, "voted");
        break;
      }
      case "vote_invalidated":
        Array.prototype.forEach.call(agent.card.votes.children, function (li) {
          if (li.dataset.target === e.target_label) li.classList.add("stale");
        });
        break;
      case "action_rejected":
        agent.card.votes.appendChild(el("li", "rejected", "rejected: " + e.reason));
        break;
      case "agent_restarted":
        setAgentState(agent, "restarting", "working");
        break;
      case "agent_failed":
        setAgentState(agent, "failed: " + e.error, "failed");
        break;
      case "usage":
        agent.card.usage += (e.input_tokens || 0) + (e.output_tokens || 0);
        agent.card.tokens.textContent = agent.card.usage + " tok";
        break;
      case "coordination_finished":
        state.winner = e.winner;
        if (e.winner) {
          agentOf(state, e.winner).card.root.classList.add("winner");
          $("winner").textContent = "by " + e.winner + " (" + (e.winner_label || "") + ") · " + e.reason;
        }
        break;
      case "presentation_started":
        setAgentState(agent, "presenting", "presenting");
        $("final").hidden = false;
        break;
      case "final_text":
        state.finalText += e.text;
        showFinal(state.finalText);
        break;
      case "evaluation_started":
        setAgentState(agent, "evaluating the final answer", "presenting");
        break;
      case "orchestration_restarted":
        // The coordination starts over: the presented text was not the final answer.
        state.finalText = "";
        showFinal("");
        if (state.winner) agentOf(state, state.winner).card.root.classList.remove("winner");
        state.winner = null;
        $("winner").textContent =
          "attempt " + e.attempt + "/" + e.max_attempts + " · restarted: " + e.reason;
        break;
      case "run_finished":
        state.finished = true;
        showFinal(e.answer || state.finalText || "(no answer: " + e.reason + ")");
        if (e.winner) setAgentState(agentOf(state, e.winner), "winner", "winner");
        setStatus(String(e.status));
        loadRuns();
        break;
    }
  }

  // A line of the agents' questions and answers (`ask_others`), model or person text as text.
  function said(kind, e, lead, words) {
    var line = el("li", "said " + kind);
    line.dataset.request = e.request_id;
    line.append(el("b", null, lead), el("span", "words", words.slice(0, 4000)));
    return line;
  }

  function whom(ids) {
    return ids.map(function (id) { return id === "human" ? "the user" : id; }).join(", ");
  }

  // --- permission asks: the open ones come as an `asks` message, whenever they change ---

  function markAsking(run) {
    run.state.order.forEach(function (id) {
      var c = run.state.agents[id].card;
      c.root.classList.toggle("asking", c.asks.children.length + c.questions.children.length > 0);
    });
  }

  function showAsks(run, asks) {
    var open = {};
    asks.forEach(function (ask) {
      open[ask.id] = true;
      if (!run.state.asks[ask.id]) run.state.asks[ask.id] = askBox(run, ask);
    });
    Object.keys(run.state.asks).forEach(function (id) {
      if (open[id]) return;
      var box = run.state.asks[id];
      delete run.state.asks[id];
      box.remove();
    });
    markAsking(run);
  }

  function askBox(run, ask) {
    var agent = agentOf(run.state, ask.agent);
    var box = el("div", "ask");
    box.dataset.ask = ask.id;
    box.dataset.risk = ask.risk;
    var title = el("div", "ask-title", "permission asked · ");
    title.appendChild(el("span", "risk", ask.risk + " risk"));
    var facts = el("dl");
    var rows = [["tool", ask.tool]];
    ask.effects.forEach(function (line, i) { rows.push([i ? "" : "effect", line]); });
    rows.push(["reason", ask.reason]);
    if (ask.phase === "presentation") rows.push(["phase", "final presentation"]);
    rows.forEach(function (row) { facts.append(el("dt", null, row[0]), el("dd", null, row[1])); });
    var buttons = el("div", "ask-buttons");
    var note = el("p", "ask-note",
      "no answer by " + new Date(ask.deadline * 1000).toLocaleTimeString() + " is a deny");
    ask.choices.forEach(function (choice) {
      var button = el("button", "choice " + choice.value, choice.text);
      button.type = "button";
      button.dataset.choice = choice.value;
      button.title = choice.hint;
      button.addEventListener("click", function () { answer(run, ask, choice, box, note); });
      buttons.appendChild(button);
    });
    box.append(title, facts, buttons, note);
    agent.card.asks.appendChild(box);
    return box;
  }

  function answer(run, ask, choice, box, note) {
    box.querySelectorAll("button").forEach(function (b) { b.disabled = true; });
    var path = "/api/runs/" + encodeURIComponent(run.id) + "/asks/" + encodeURIComponent(ask.id);
    api(path, { method: "POST", body: JSON.stringify({ choice: choice.value }) })
      .then(function () { note.textContent = "sent: " + choice.text; })
      .catch(function (error) {
        var closed = error.status === 409 || error.status === 404;
        note.textContent = error.status === 409 ? "already answered"
          : error.status === 404 ? "this ask is no longer open" : error.message;
        if (!closed) box.querySelectorAll("button").forEach(function (b) { b.disabled = false; });
      });
  }

  // --- agents' questions to the person: a `questions` message, whenever they change ---

  function showQuestions(run, data) {
    var open = {};
    data.questions.forEach(function (q) {
      open[q.id] = true;
      if (!run.state.questions[q.id]) run.state.questions[q.id] = questionBox(run, q);
    });
    Object.keys(run.state.questions).forEach(function (id) {
      if (open[id]) return;
      run.state.questions[id].remove();
      delete run.state.questions[id];
    });
    data.closed.forEach(function (q) {
      if (run.state.closedQuestions[q.id]) return;
      run.state.closedQuestions[q.id] = true;
      // An answer is in the transcript already (`broadcast_answered`); say how others ended.
      if (q.outcome === "answered") return;
      var line = el("li", "said closed", "question " + q.note);
      line.dataset.outcome = q.outcome;
      line.dataset.question = q.id;
      agentOf(run.state, q.agent).card.tools.appendChild(line);
    });
    markAsking(run);
  }

  function chars(text) { return Array.from(text).length; }  // as the server counts them

  function questionBox(run, q) {
    var agent = agentOf(run.state, q.agent);
    var box = el("form", "question");
    box.dataset.question = q.id;
    var title = el("div", "ask-title", "question from " + q.agent);
    var text = el("pre", "question-text", q.question);
    var input = el("textarea", "question-answer");
    input.rows = 3;
    input.placeholder = "Your answer… (Ctrl+Enter sends)";
    input.setAttribute("aria-label", "your answer to " + q.agent);
    var count = el("span", "question-count");
    var buttons = el("div", "ask-buttons");
    var send = el("button", "choice question-send", "Send");
    send.type = "submit";
    var skip = el("button", "choice question-skip", "Skip");
    skip.type = "button";
    skip.title = "no answer: the agent decides itself";
    buttons.append(send, skip, count);
    var note = el("p", "ask-note question-note",
      "no answer by " + new Date(q.deadline * 1000).toLocaleTimeString() + ": the agent decides itself");
    function counted() {
      var n = chars(input.value);
      count.textContent = n + " / " + q.max_chars;
      count.classList.toggle("over", n > q.max_chars);
    }
    counted();
    input.addEventListener("input", counted);
    input.addEventListener("keydown", function (event) {
      if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) box.requestSubmit();
    });
    box.addEventListener("submit", function (event) {
      event.preventDefault();
      reply(run, q, { text: input.value }, box, note);
    });
    skip.addEventListener("click", function () { reply(run, q, { skip: true }, box, note); });
    box.append(title, text, input, buttons, note);
    agent.card.questions.appendChild(box);
    return box;
  }

  function reply(run, q, body, box, note) {
    var controls = box.querySelectorAll("button, textarea");
    controls.forEach(function (c) { c.disabled = true; });
    var path = "/api/runs/" + encodeURIComponent(run.id) + "/questions/" + encodeURIComponent(q.id);
    api(path, { method: "POST", body: JSON.stringify(body) })
      .then(function () { note.textContent = body.skip ? "skipped" : "sent"; })
      .catch(function (error) {
        var closed = error.status === 409 || error.status === 404;
        note.textContent = error.status === 404 ? "this question is no longer open" : error.message;
        note.classList.add("error");
        if (!closed) controls.forEach(function (c) { c.disabled = false; });
      });
  }

  // Refusals and what a person or policy allowed; rule-allowed calls are the quiet norm.
  function showDecision(agent, e) {
    if (e.allowed && e.operator === "rule") return;
    var text = (e.allowed ? "allowed " : "refused ") + e.tool + " · " + e.operator + ": " + e.reason;
    var item = el("li", "perm " + (e.allowed ? "allowed" : "refused"), text);
    item.dataset.operator = e.operator;
    item.dataset.seq = String(e.seq);
    agent.card.perms.appendChild(item);
  }

  var pending = null;
  function showFinal(text) {
    $("final").hidden = false;
    pending = text;
    // Rendering on every word is wasted work; once per frame is plenty.
    requestAnimationFrame(function () {
      if (pending === null) return;
      $("final-answer").innerHTML = window.renderMarkdown(pending);
      pending = null;
    });
  }

  // --- start -------------------------------------------------------------------------

  document.addEventListener("DOMContentLoaded", function () {
    takeTokenFromUrl();
    $("login-form").addEventListener("submit", function (event) {
      event.preventDefault();
      sessionStorage.setItem(TOKEN_KEY, $("token-input").value.trim());
      $("token-input").value = "";
      enter();
    });
    $("ask").addEventListener("submit", ask);
    $("stop").addEventListener("click", stopRun);
    window.addEventListener("hashchange", function () {
      var wanted = runFromHash();
      if (wanted && (!current || current.id !== wanted)) openRun(wanted);
    });
    setInterval(loadRuns, 5000);
    if (token()) enter(); else showLogin("");
  });
})();
