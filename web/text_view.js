// The lesson's text view: the current step (title, prose, code, check and its
// feedback) as real HTML beside the canvas, for screen readers, the browser's
// find and copy. The app sends each step as JSON (src/app/platform/web_text_view.cpp,
// App::text_view_json); the view is hidden until asked for (its button or the
// lesson panel's "Text view"). Text goes in with textContent only, never as HTML.
(function () {
  "use strict";
  var pt2lab = window.pt2lab;
  var view = document.getElementById("text-view");
  var body = document.getElementById("text-view-body");
  var toggleButton = document.getElementById("text-view-toggle");
  var closeButton = document.getElementById("text-view-close");
  var last = null;

  // `code`, *emphasis* and **strong**, as the lesson format allows (docs/LESSONS.md).
  function inline(parent, text) {
    var i = 0, buf = "", stack = [parent];
    function top() { return stack[stack.length - 1]; }
    function flush() { if (buf) { top().appendChild(document.createTextNode(buf)); buf = ""; } }
    function toggle(tag) {
      flush();
      if (top().tagName === tag.toUpperCase() && stack.length > 1) { stack.pop(); return; }
      var el = document.createElement(tag);
      top().appendChild(el);
      stack.push(el);
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
          row.forEach(function (cell) { tr.appendChild(el(r === 0 ? "th" : "td", cell)); });
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

  function render(s) {
    body.textContent = "";
    if (!s) {
      body.appendChild(el("p", view.dataset.empty || "No lesson is open."));
      return;
    }
    var en = s.lang === "en";
    document.getElementById("text-view-title").textContent = s.title;
    body.lang = s.lang;
    var counter = el("p", (en ? "Step " : "第 ") + s.step + " / " + s.steps + (en ? "" : " 步"), "counter");
    body.appendChild(counter);
    body.appendChild(el("h3", s.step_title));
    if (s.intro && s.intro.length) { blocks(body, s.intro); body.appendChild(document.createElement("hr")); }
    blocks(body, s.prose);
    if (s.button) {
      var act = el("p", (en ? "The step's button: " : "這一步的按鈕：") + s.button +
        (s.performed ? (en ? " (done)" : "（已執行）") : ""), "action");
      body.appendChild(act);
    }
    if (s.after) blocks(body, s.after);
    if (s.check) {
      var sec = document.createElement("section");
      sec.className = "check";
      sec.appendChild(el("h4", s.quiz ? (en ? "Chapter-map question" : "章節地圖問題") : (en ? "Check" : "小測驗")));
      sec.appendChild(el("p", s.check.question));
      var ol = document.createElement("ol");
      ol.type = "A";
      s.check.options.forEach(function (o, i) {
        var li = el("li", o);
        if (i === s.check.chosen) li.className = s.check.correct ? "chosen right" : "chosen wrong";
        ol.appendChild(li);
      });
      sec.appendChild(ol);
      if (s.check.chosen >= 0) {
        var fb = el("p", (s.check.correct ? (en ? "Right. " : "答對了。") : (en ? "Not quite. " : "再想想。")) +
          s.check.feedback, "feedback");
        fb.setAttribute("role", "status");
        sec.appendChild(fb);
      }
      body.appendChild(sec);
    }
    var link = document.createElement("a");
    link.href = s.link;
    link.textContent = (en ? "Link to this step: " : "這一步的連結：") + s.link;
    link.className = "link";
    body.appendChild(link);
  }

  function show(on) {
    view.hidden = !on;
    document.body.classList.toggle("text-view-open", on);
    toggleButton.setAttribute("aria-expanded", on ? "true" : "false");
    if (on) render(last);
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
