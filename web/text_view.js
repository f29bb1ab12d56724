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

  // The view's words in the page's two languages (the lesson's prose is the lesson's).
  var WORDS = {
    en: {
      step: function (k, n) { return "Step " + k + " of " + n; },
      action: "The step's action", done: "Done: ", results: "What it did",
      torch: function (t, m) { return "torch raises " + (t || "an error") + (m ? ": " + m : ""); },
      parity: function (v, d, n) {
        return "outputs vs the file as loaded: " + v + " (max |diff| " + d + (n > 1 ? ", " + n + " outputs" : "") + ")";
      },
      changed: "changed", unchanged: "nothing changed",
      diff: "What changed in the graph: ", added: "added ", removed: "removed ", rewired: "rewired ", edited: "changed ",
      nodiff: "The shown graph did not change.",
      graph: "The graph", view: { "ExportedProgram": "the ExportedProgram (ep.graph)", "ep.module()": "ep.module()" },
      nodes: function (key, v, n) { return "Graph " + key + ", shown as " + v + ": " + n + " nodes"; },
      ops: "Calls, in graph order: ", highlight: "Highlighted: ", lint: "lint: ", lintok: "lint passes.",
      check: "Check", quiz: "Chapter-map question", answer: "Check my answer", choose: "Choose an option first.",
      right: "Right. ", wrong: "Not quite. ", answered: function (l) { return "Your answer: " + l + ". "; },
      prev: "Previous step", next: "Next step", last: "This is the lesson's last step.",
      link: "Link to this step: ", none: "No lesson is open.", close: "Close"
    },
    "zh-TW": {
      step: function (k, n) { return "第 " + k + " 步，共 " + n + " 步"; },
      action: "這一步的動作", done: "已執行：", results: "執行結果",
      torch: function (t, m) { return "torch 拋出 " + (t || "錯誤") + (m ? "：" + m : ""); },
      parity: function (v, d, n) {
        return "輸出與原檔相比：" + v + "（最大 |diff| " + d + (n > 1 ? "，" + n + " 個輸出" : "") + "）";
      },
      changed: "有改變", unchanged: "沒有改變",
      diff: "圖的變化：", added: "新增 ", removed: "移除 ", rewired: "重新接線 ", edited: "修改 ",
      nodiff: "顯示的圖沒有改變。",
      graph: "這張圖", view: { "ExportedProgram": "ExportedProgram（ep.graph）", "ep.module()": "ep.module()" },
      nodes: function (key, v, n) { return "圖 " + key + "，以 " + v + " 顯示：共 " + n + " 個節點"; },
      ops: "依圖中順序的呼叫：", highlight: "標示的節點：", lint: "lint：", lintok: "lint 通過。",
      check: "小測驗", quiz: "章節地圖問題", answer: "送出答案", choose: "請先選一個選項。",
      right: "答對了。", wrong: "再想想。", answered: function (l) { return "你的答案：" + l + "。"; },
      prev: "上一步", next: "下一步", last: "這是本課的最後一步。",
      link: "這一步的連結：", none: "目前沒有開啟課程。", close: "關閉"
    }
  };
  function words(s) { return WORDS[s && s.lang === "en" ? "en" : "zh-TW"]; }

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
    nav.appendChild(p.prev);
    nav.appendChild(p.next);
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
      var line = a.graph + ": " + a.kind + ": ";
      if (a.torch_error_type || a.torch_error) line += w.torch(a.torch_error_type, a.torch_error);
      else if (a.parity) line += w.parity(a.parity.verdict, a.parity.max_abs.toPrecision(3), a.parity.outputs);
      else line += a.changed ? w.changed : w.unchanged;
      out.push({ line: line, summary: a.summary });
    });
    return out;
  }

  function diffText(d, w) {
    if (!d) return "";
    var parts = [];
    if (d.added.length) parts.push(w.added + d.added.join(", "));
    if (d.removed.length) parts.push(w.removed + d.removed.join(", "));
    if (d.rewired.length) parts.push(w.rewired + d.rewired.join(", "));
    if (d.changed.length) parts.push(w.edited + d.changed.join(", "));
    return parts.length ? w.diff + parts.join("; ") + "." : w.nodiff;
  }

  function renderResults(s, w) {
    var r = parts.results;
    r.textContent = "";
    if (!s.performed || !s.results) return;
    r.appendChild(plain("h4", w.results));
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
    sec.appendChild(plain("h4", w.graph));
    var kinds = Object.keys(g.kinds).map(function (k) { return g.kinds[k] + " " + k; }).join(", ");
    sec.appendChild(plain("p", w.nodes(g.key, w.view[g.view] || g.view, g.nodes) + " (" + kinds + ")."));
    if (g.ops.length)
      sec.appendChild(plain("p", w.ops + g.ops.map(function (o) { return o.op + (o.count > 1 ? " ×" + o.count : ""); }).join(", ") + "."));
    if (g.highlight.length) sec.appendChild(plain("p", w.highlight + g.highlight.join(", ") + "."));
    sec.appendChild(plain("p", g.lint ? w.lint + g.lint : w.lintok));
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
      sec.appendChild(plain("h4", s.quiz ? w.quiz : w.check));
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
      var submit = plain("button", w.answer);
      submit.type = "button";
      submit.id = "text-view-answer";
      submit.addEventListener("click", function () {
        var on = sec.querySelector("input[name=text-view-option]:checked");
        if (!on) { parts.feedback.textContent = w.choose; return; }
        command(2, Number(on.value));
      });
      fs.appendChild(submit);
      sec.appendChild(fs);
    }
    var chosen = s.check.chosen;
    sec.querySelectorAll("label").forEach(function (l, i) {
      l.className = i === chosen ? (s.check.correct ? "chosen right" : "chosen wrong") : "";
    });
    if (chosen >= 0) {
      var input = sec.querySelector("#text-view-option-" + chosen);
      if (fresh || !sec.querySelector("input:checked")) input.checked = true;
      parts.feedback.textContent = "";
      parts.feedback.appendChild(document.createTextNode(
        w.answered(String.fromCharCode(65 + chosen)) + (s.check.correct ? w.right : w.wrong)));
      inline(parts.feedback, s.check.feedback);
      parts.feedback.className = "feedback " + (s.check.correct ? "right" : "wrong");
    } else if (fresh) {
      parts.feedback.textContent = "";
      parts.feedback.className = "feedback";
    }
  }

  var shownKey = "";
  function render(s) {
    var w = words(s);
    closeButton.textContent = w.close;
    notice.hidden = !(s && s.notice);
    notice.textContent = s && s.notice ? s.notice : "";
    if (!s || !s.lesson) {
      parts = null;
      shownKey = "";
      body.textContent = "";
      body.appendChild(plain("p", w.none));
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
    parts.counter.textContent = w.step(s.step, s.steps);
    if (fresh) {
      parts.title.textContent = "";
      inline(parts.title, s.step_title);
      parts.text.textContent = "";
      if (s.intro && s.intro.length) { blocks(parts.text, s.intro); parts.text.appendChild(document.createElement("hr")); }
      blocks(parts.text, s.prose);
    }
    parts.action.hidden = !s.button;
    if (s.button) {
      parts.actionHeading.textContent = w.action;
      parts.perform.textContent = (s.performed ? w.done : "") + s.button;
      setDisabled(parts.perform, s.performed);
    }
    renderResults(s, w);
    parts.after.textContent = "";
    if (s.after) blocks(parts.after, s.after);
    renderGraph(s, w);
    renderCheck(s, w, fresh);
    parts.prev.textContent = w.prev;
    parts.next.textContent = s.step >= s.steps ? w.last : w.next;
    setDisabled(parts.prev, s.step <= 1);
    setDisabled(parts.next, s.step >= s.steps);
    parts.link.href = s.link;
    parts.link.textContent = w.link + s.link;
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
    shown: function () { return !view.hidden; },
    current: function () { return last; }
  };
  toggleButton.addEventListener("click", function () { show(view.hidden); });
  closeButton.addEventListener("click", function () { show(false); document.getElementById("canvas").focus(); });
})();
