/** Registers every gslbctl command. */
import './validate-config.js';
import './gitops-commands.js';
import './wait.js';
import './completion.js';
