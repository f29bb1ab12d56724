// The lesson's text view: the current step as real HTML beside the canvas, for
// screen readers, the browser's find and copy, and the keyboard: headings, the
// prose, the step's button, what it did (torch's message, parity, the diff), the
// graph in words, the check as a radio group with its feedback in a live region,
// Previous / Next. The app sends each step as JSON (src/app/platform/web_text_view.cpp,
// App::text_view_json) and owns the lesson: every control here is a command the
// app performs (pt2lab_text_view_command), then it sends the step again. The view
// is hidden until asked for (its button or the lesson panel's "Text view").
// Text goes in with textContent only, never as HTML.
(function () {
  "use strict";
  var pt2lab = window.pt2lab;
  var view = document.getElementById("text-view");
  var body = document.getElementById("text-view-body");
  var notice = document.getElementById("text-view-notice");
  var toggleButton = document.getElementById("text-view-toggle");
  var closeButton = document.getElementById("text-view-close");
  var last = null;

  // The view's words: the page's, in its language, from the app's one table
  // (src/app/page_strings.inc, sent with platform::set_page_language into pt2lab.words).
  // The lesson's prose is the lesson's. fmt fills in the table's printf conversions.
  function words() { return pt2lab.words || {}; }
  function fmt(f) {
    var args = Array.prototype.slice.call(arguments, 1), i = 0;
    return String(f || "").replace(/%(\.\d+)?[sdg]/g, function () { return String(args[i++]); });
  }

  function command(kind, number) {
    var M = window.Module;
    if (M && M._pt2lab_text_view_command) M._pt2lab_text_view_command(kind, number);
  }

  // `code`, *emphasis* and **strong**, as the lesson format allows (docs/LESSONS.md).
  function inline(parent, text) {
    var i = 0, buf = "", stack = [parent];
    function top() { return stack[stack.length - 1]; }
    function flush() { if (buf) { top().appendChild(document.createTextNode(buf)); buf = ""; } }
    function toggle(tag) {
      flush();
      if (top().tagName === tag.toUpperCase() && stack.length > 1) { stack.pop(); return; }
      var e = document.createElement(tag);
      top().appendChild(e);
      stack.push(e);
    }
    while (i < text.length) {
      var c = text[i];
      if (c === "`") {
        var end = text.indexOf("`", i + 1);
        if (end < 0) end = text.length;
        flush();
        var code = document.createElement("code");
        code.textContent = text.slice(i + 1, end);
        top().appendChild(code);
        i = end + 1;
      } else if (c === "*" && text[i + 1] === "*") {
        toggle("strong");
        i += 2;
      } else if (c === "*") {
        toggle("em");
        i += 1;
      } else {
        buf += c;
        i += 1;
      }
    }
    flush();
  }

  function el(tag, text, cls) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) inline(e, text);
    return e;
  }
  function plain(tag, text, cls) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    e.textContent = text;
    return e;
  }

  function blocks(parent, list) {
    (list || []).forEach(function (b) {
      if (b.kind === "heading") parent.appendChild(el("h4", b.text));
      else if (b.kind === "paragraph") parent.appendChild(el("p", b.text));
      else if (b.kind === "bullets" || b.kind === "numbered") {
        var l = document.createElement(b.kind === "bullets" ? "ul" : "ol");
        b.items.forEach(function (it) { l.appendChild(el("li", it)); });
        parent.appendChild(l);
      } else if (b.kind === "table") {
        var t = document.createElement("table");
        b.rows.forEach(function (row, r) {
          var tr = document.createElement("tr");
          row.forEach(function (cell) {
            var c = el(r === 0 ? "th" : "td", cell);
            if (r === 0) c.scope = "col";
            tr.appendChild(c);
          });
          t.appendChild(tr);
        });
        parent.appendChild(t);
      } else if (b.kind === "code") {
        var pre = document.createElement("pre"), code = document.createElement("code");
        code.textContent = b.lines.join("\n");
        if (b.lang) code.className = "language-" + b.lang;
        pre.appendChild(code);
        parent.appendChild(pre);
      }
    });
  }

  // The parts that stay while the view is open, so focus and live regions survive
  // an update (a screen reader announces a live region's change, not a new one).
  var parts = null;
  function skeleton() {
    body.textContent = "";
    var p = {};
    p.counter = plain("p", "", "counter");
    p.title = plain("h3", "");
    p.title.tabIndex = -1;
    p.text = document.createElement("div");
    p.action = document.createElement("section");
    p.action.className = "action";
    p.actionHeading = plain("h4", "");
    p.perform = plain("button", "");
    p.perform.type = "button";
    p.perform.id = "text-view-perform";
    p.perform.addEventListener("click", function () {
      if (p.perform.getAttribute("aria-disabled") !== "true") command(0, 0);
    });
    p.results = document.createElement("div");
    p.results.id = "text-view-results";
    p.results.setAttribute("aria-live", "polite");
    p.action.appendChild(p.actionHeading);
    p.action.appendChild(p.perform);
    p.action.appendChild(p.results);
    p.after = document.createElement("div");
    p.graph = document.createElement("section");
    p.graph.className = "graph";
    p.check = document.createElement("section");
    p.check.className = "check";
    p.feedback = plain("p", "", "feedback");
    p.feedback.id = "text-view-feedback";
    p.feedback.setAttribute("role", "status");
    var nav = document.createElement("nav");
    nav.className = "steps";
    p.prev = plain("button", "");
    p.prev.type = "button";
    p.prev.id = "text-view-prev";
    p.next = plain("button", "");
    p.next.type = "button";
    p.next.id = "text-view-next";
    function go(delta) {
      return function (e) {
        if (e.currentTarget.getAttribute("aria-disabled") === "true" || !last) return;
        command(1, last.step + delta);
      };
    }
    p.prev.addEventListener("click", go(-1));
    p.next.addEventListener("click", go(+1));
    // On a lesson's last step: the course's next lesson, in place of a Next that leads nowhere.
    p.nextLesson = plain("button", "");
    p.nextLesson.type = "button";
    p.nextLesson.id = "text-view-next-lesson";
    p.nextLesson.addEventListener("click", function () { if (last && last.next_lesson) command(3, 0); });
    nav.appendChild(p.prev);
    nav.appendChild(p.next);
    nav.appendChild(p.nextLesson);
    p.link = document.createElement("a");
    p.link.className = "link";
    [p.counter, p.title, p.text, p.action, p.after, p.graph, p.check, p.feedback, nav, p.link]
      .forEach(function (e) { body.appendChild(e); });
    return p;
  }

  function setDisabled(button, off) {
    if (off) button.setAttribute("aria-disabled", "true");
    else button.removeAttribute("aria-disabled");
  }

  function resultsText(s, w) {
    var out = [];
    (s.results || []).forEach(function (a) {
      var what;
      if (a.torch_error) what = fmt(w.torch_raises, a.torch_error_type || w.an_error, a.torch_error);
      else if (a.torch_error_type) what = fmt(w.torch_raises_type, a.torch_error_type);
      else if (a.parity) {
        var d = a.parity.max_abs.toPrecision(3);
        what = a.parity.outputs > 1 ? fmt(w.web_parity_n, a.parity.verdict, d, a.parity.outputs)
                                    : fmt(w.web_parity, a.parity.verdict, d);
      } else what = a.changed ? w.res_changed : w.res_unchanged;
      out.push({ line: fmt(w.res_line, a.graph, fmt(w.res_line, a.kind, what)), summary: a.summary });
    });
    var c = s.runs_compared; // several graphs ran: their outputs against each other
    if (c) out.push({ line: fmt(w.res_runs, c.runs, c.bit_identical ? w.parity_bit_identical : w.parity_differs,
                                c.max_abs.toPrecision(3)) });
    return out;
  }

  function diffText(d, w) {
    if (!d) return "";
    var parts = [];
    [["added", w.diff_added], ["removed", w.diff_removed], ["rewired", w.diff_rewired], ["changed", w.diff_changed]]
      .forEach(function (k) { if (d[k[0]].length) parts.push(k[1] + " " + d[k[0]].join(w.web_list_sep)); });
    return parts.length ? w.web_diff + parts.join(w.web_part_sep) + w.web_end : w.web_no_diff;
  }

  function renderResults(s, w) {
    var r = parts.results;
    r.textContent = "";
    if (!s.performed || !s.results) return;
    r.appendChild(plain("h4", w.web_results));
    var ul = document.createElement("ul");
    resultsText(s, w).forEach(function (x) {
      var li = plain("li", x.line);
      if (x.summary && x.summary !== x.line) li.appendChild(plain("pre", x.summary, "summary"));
      ul.appendChild(li);
    });
    r.appendChild(ul);
    r.appendChild(plain("p", diffText(s.diff, w), "diff"));
  }

  function renderGraph(s, w) {
    var g = s.graph, sec = parts.graph;
    sec.textContent = "";
    if (!g) return;
    sec.appendChild(plain("h4", w.web_graph));
    var kinds = Object.keys(g.kinds).map(function (k) { return g.kinds[k] + " " + k; }).join(w.web_list_sep);
    var view = g.view === "ExportedProgram" ? w.web_view_program : g.view;
    sec.appendChild(plain("p", fmt(w.web_nodes, g.key, view, g.nodes, kinds)));
    if (g.ops.length)
      sec.appendChild(plain("p", w.web_ops + g.ops.map(function (o) { return o.op + (o.count > 1 ? " ×" + o.count : ""); }).join(w.web_list_sep) + w.web_end));
    if (g.highlight.length) sec.appendChild(plain("p", w.web_highlight + g.highlight.join(w.web_list_sep) + w.web_end));
    sec.appendChild(plain("p", g.lint ? w.web_lint + g.lint : w.web_lint_ok));
  }

  function renderCheck(s, w, fresh) {
    var sec = parts.check;
    if (!s.check) {
      sec.textContent = "";
      parts.feedback.textContent = "";
      return;
    }
    if (fresh) {
      sec.textContent = "";
      sec.appendChild(plain("h4", s.quiz ? w.lesson_quiz : w.lesson_check));
      var fs = document.createElement("fieldset");
      var legend = el("legend", s.check.question);
      fs.appendChild(legend);
      s.check.options.forEach(function (o, i) {
        var label = document.createElement("label");
        var input = document.createElement("input");
        input.type = "radio";
        input.name = "text-view-option";
        input.value = String(i);
        input.id = "text-view-option-" + i;
        label.appendChild(input);
        label.appendChild(document.createTextNode(String.fromCharCode(65 + i) + ". "));
        inline(label, o);
        fs.appendChild(label);
      });
      var submit = plain("button", w.web_answer);
      submit.type = "button";
      submit.id = "text-view-answer";
      submit.addEventListener("click", function () {
        var on = sec.querySelector("input[name=text-view-option]:checked");
        if (!on) { parts.feedback.textContent = w.web_choose; return; }
        command(2, Number(on.value));
      });
      fs.appendChild(submit);
      sec.appendChild(fs);
    }
    var chosen = s.check.chosen;
    sec.querySelectorAll("label").forEach(function (l, i) {
      l.className = i !== chosen ? "" : s.check.predicted ? "chosen" : s.check.correct ? "chosen right" : "chosen wrong";
    });
    if (chosen >= 0 && s.check.predicted) {
      // A prediction: judged once the step's button has run.
      var picked = sec.querySelector("#text-view-option-" + chosen);
      if (fresh || !sec.querySelector("input:checked")) picked.checked = true;
      parts.feedback.textContent = fmt(w.lesson_predicted, String.fromCharCode(65 + chosen));
      parts.feedback.className = "feedback";
    } else if (chosen >= 0) {
      var input = sec.querySelector("#text-view-option-" + chosen);
      if (fresh || !sec.querySelector("input:checked")) input.checked = true;
      parts.feedback.textContent = "";
      parts.feedback.appendChild(document.createTextNode(
        fmt(w.web_answered, String.fromCharCode(65 + chosen), s.check.correct ? w.lesson_right : w.lesson_wrong)));
      inline(parts.feedback, s.check.feedback);
      parts.feedback.className = "feedback " + (s.check.correct ? "right" : "wrong");
    } else if (fresh) {
      parts.feedback.textContent = "";
      parts.feedback.className = "feedback";
    }
  }

  var shownKey = "";
  function render(s) {
    var w = words();
    notice.hidden = !(s && s.notice);
    notice.textContent = s && s.notice ? s.notice : "";
    if (!s || !s.lesson) {
      parts = null;
      shownKey = "";
      body.textContent = "";
      body.appendChild(plain("p", w.web_none));
      document.getElementById("text-view-title").textContent = "pt2lab";
      return;
    }
    if (!parts) parts = skeleton();
    var key = s.lesson + "/" + s.step + "/" + s.lang;
    var fresh = key !== shownKey;
    var focusInside = view.contains(document.activeElement);
    shownKey = key;
    document.getElementById("text-view-title").textContent = s.title;
    body.lang = s.lang;
    parts.counter.textContent = fmt(w.web_step, s.step, s.steps);
    if (fresh) {
      parts.title.textContent = "";
      inline(parts.title, s.step_title);
      parts.text.textContent = "";
      if (s.intro && s.intro.length) { blocks(parts.text, s.intro); parts.text.appendChild(document.createElement("hr")); }
      blocks(parts.text, s.prose);
    }
    parts.action.hidden = !s.button;
    if (s.button) {
      parts.actionHeading.textContent = w.web_action;
      parts.perform.textContent = (s.performed ? w.lesson_done : "") + s.button;
      setDisabled(parts.perform, s.performed);
    }
    renderResults(s, w);
    parts.after.textContent = "";
    if (s.after) blocks(parts.after, s.after);
    renderGraph(s, w);
    renderCheck(s, w, fresh);
    parts.prev.textContent = w.web_prev;
    parts.next.textContent = s.step >= s.steps ? w.web_last : w.web_next;
    setDisabled(parts.prev, s.step <= 1);
    setDisabled(parts.next, s.step >= s.steps);
    parts.next.hidden = !!s.next_lesson;
    parts.nextLesson.hidden = !s.next_lesson;
    if (s.next_lesson) {
      parts.nextLesson.textContent = w.lesson_next_lesson;
      parts.nextLesson.setAttribute("aria-label", fmt(w.lesson_next_lesson_tip, s.next_lesson.title));
    }
    parts.link.href = s.link;
    parts.link.textContent = w.web_link + s.link;
    // A new step while the learner works in the view: its heading takes focus, so
    // a screen reader reads the new step from the top.
    if (fresh && focusInside && document.activeElement !== parts.title) parts.title.focus();
  }

  function show(on) {
    view.hidden = !on;
    document.body.classList.toggle("text-view-open", on);
    toggleButton.setAttribute("aria-expanded", on ? "true" : "false");
    if (on) {
      shownKey = "";
      render(last);
      (parts ? parts.title : closeButton).focus();
    }
  }

  pt2lab.textView = {
    set: function (json) {
      last = json ? JSON.parse(json) : null;
      if (!view.hidden) render(last);
    },
    toggle: function () { show(view.hidden); },
    // The page's language changed (pt2lab.setLanguage): the view's own words again.
    language: function () { if (!view.hidden) render(last); },
    shown: function () { return !view.hidden; },
    current: function () { return last; }
  };
  toggleButton.addEventListener("click", function () { show(view.hidden); });
  closeButton.addEventListener("click", function () { show(false); document.getElementById("canvas").focus(); });
})();
