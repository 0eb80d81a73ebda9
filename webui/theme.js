// Applies the remembered theme before the first paint (a classic script: it blocks, modules do not).
(function () {
  var t = null;
  try { t = localStorage.getItem('gslb-theme'); } catch (e) { /* storage off: follow the system */ }
  if (t === 'dark' || t === 'light') document.documentElement.setAttribute('data-theme', t);
}());
