// A tiny Markdown renderer for answers. Safe by construction: the whole text is
// HTML-escaped first, and only the tags written below are ever produced. Links keep
// http(s) and mailto URLs only. Headings, lists, quotes, code, bold, italics, links.
"use strict";

(function () {
  function escapeHtml(text) {
    return text
      .replace(/&/g, "&amp;")
      .replace(/</g, "&lt;")
      .replace(/>/g, "&gt;")
      .replace(/"/g, "&quot;")
      .replace(/'/g, "&#39;");
  }

  function safeUrl(url) {
    return /^(https?:\/\/|mailto:)/i.test(url);
  }

  function emphasis(text) {
    return text
      .replace(/\[([^\]]+)\]\(([^)\s]+)\)/g, function (whole, label, url) {
        if (!safeUrl(url)) return whole;
        return '<a href="' + url + '" rel="noopener noreferrer" target="_blank">' + label + "</a>";
      })
      .replace(/\*\*([^*]+)\*\*/g, "<strong>$1</strong>")
      .replace(/__([^_]+)__/g, "<strong>$1</strong>")
      .replace(/(^|[^*\w])\*([^*\s][^*]*?)\*(?!\w)/g, "$1<em>$2</em>");
  }

  // `text` is already escaped. Code spans are kept apart from emphasis.
  function inline(text) {
    return text
      .split(/(`[^`]+`)/)
      .map(function (part) {
        if (part.length > 2 && part[0] === "`" && part[part.length - 1] === "`") {
          return "<code>" + part.slice(1, -1) + "</code>";
        }
        return emphasis(part);
      })
      .join("");
  }

  var FENCE = /^\s*```/;
  var HEADING = /^(#{1,6})\s+(.*)$/;
  var BULLET = /^\s*[-*+]\s+(.*)$/;
  var NUMBERED = /^\s*\d+[.)]\s+(.*)$/;
  var QUOTE = /^&gt;\s?(.*)$/;
  var RULE = /^\s*(-{3,}|\*{3,}|_{3,})\s*$/;

  function startsBlock(line) {
    return FENCE.test(line) || HEADING.test(line) || BULLET.test(line) ||
      NUMBERED.test(line) || QUOTE.test(line) || RULE.test(line);
  }

  function blocks(lines) {
    var out = [];
    var i = 0;
    while (i < lines.length) {
      var line = lines[i];
      var match;
      if (FENCE.test(line)) {
        var code = [];
        i += 1;
        while (i < lines.length && !FENCE.test(lines[i])) code.push(lines[i++]);
        i += 1; // the closing fence (or the end)
        out.push("<pre><code>" + code.join("\n") + "</code></pre>");
      } else if ((match = HEADING.exec(line))) {
        var level = match[1].length;
        out.push("<h" + level + ">" + inline(match[2]) + "</h" + level + ">");
        i += 1;
      } else if (RULE.test(line)) {
        out.push("<hr>");
        i += 1;
      } else if (BULLET.test(line) || NUMBERED.test(line)) {
        var pattern = BULLET.test(line) ? BULLET : NUMBERED;
        var items = [];
        while (i < lines.length && (match = pattern.exec(lines[i]))) {
          items.push("<li>" + inline(match[1]) + "</li>");
          i += 1;
        }
        var tag = pattern === BULLET ? "ul" : "ol";
        out.push("<" + tag + ">" + items.join("") + "</" + tag + ">");
      } else if (QUOTE.test(line)) {
        var quoted = [];
        while (i < lines.length && (match = QUOTE.exec(lines[i]))) {
          quoted.push(match[1]);
          i += 1;
        }
        out.push("<blockquote>" + blocks(quoted) + "</blockquote>");
      } else if (!line.trim()) {
        i += 1;
      } else {
        var para = [];
        while (i < lines.length && lines[i].trim() && !startsBlock(lines[i])) para.push(lines[i++]);
        out.push("<p>" + inline(para.join(" ")) + "</p>");
      }
    }
    return out.join("\n");
  }

  window.renderMarkdown = function (source) {
    var text = escapeHtml(String(source || "").replace(/\r\n?/g, "\n"));
    return blocks(text.split("\n"));
  };
  window.escapeHtml = escapeHtml;
})();
