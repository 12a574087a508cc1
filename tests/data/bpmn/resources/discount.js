// The discount an order gets, from its total.
var rate = total >= 500 ? 0.1 : 0.05;
execution.setVariable("rate", rate);
Math.round(total * rate);
