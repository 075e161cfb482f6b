"""The fixed question sets for the local-model quality check: 20 facts, 20 word problems.

A fact counts as right when the reply contains one of its accepted words; a word problem
when the last number in the reply is its answer. Each problem takes two or three steps.
"""

from __future__ import annotations

FACTS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("What is the capital of France?", ("paris",)),
    ("What is the capital of Japan?", ("tokyo",)),
    ("What is the largest planet in the solar system?", ("jupiter",)),
    ("What gas do plants take in from the air to make food?", ("carbon dioxide", "co2")),
    ("Who wrote the play Romeo and Juliet?", ("shakespeare",)),
    ("What is the chemical symbol for gold?", ("au",)),
    ("How many continents are there on Earth?", ("seven", "7")),
    ("What is the boiling point of water at sea level in degrees Celsius?", ("100",)),
    ("Which ocean is the largest?", ("pacific",)),
    ("What is the hardest natural substance?", ("diamond",)),
    ("Which planet is known as the Red Planet?", ("mars",)),
    ("What language is mainly spoken in Brazil?", ("portuguese",)),
    ("What is the capital of Italy?", ("rome",)),
    ("How many legs does a spider have?", ("eight", "8")),
    ("What is the freezing point of water in degrees Celsius?", ("0", "zero")),
    ("Who painted the Mona Lisa?", ("leonardo", "da vinci")),
    ("What is the largest mammal?", ("blue whale",)),
    ("What is the capital of Canada?", ("ottawa",)),
    ("What is H2O commonly called?", ("water",)),
    ("How many days are there in a leap year?", ("366",)),
)

PROBLEMS: tuple[tuple[str, int], ...] = (
    ("A farmer has 12 cows and buys 3 times as many more. How many cows does he have now?", 48),
    ("Tom has 5 boxes with 4 apples in each. He eats 3 apples. How many apples are left?", 17),
    ("A book costs 8 dollars. Sara buys 3 books and pays with a 50 dollar bill. How much change does she get?", 26),
    ("There are 24 students. Half of them go home, then 5 more arrive. How many students are there now?", 17),
    ("A shop sells pens at 2 dollars each. Ann buys 6 pens and a 7 dollar notebook. How much does she spend?", 19),
    ("Ben reads 15 pages a day for 4 days, then 10 pages on the fifth day. How many pages did he read?", 70),
    ("A baker makes 60 cookies and packs them in bags of 6. He sells 7 bags. How many bags are left?", 3),
    ("Lily has 30 stickers. She gives 8 to her brother and 5 to her friend. How many does she keep?", 17),
    ("A car travels 45 miles each hour for 3 hours, then 20 more miles. How far did it go?", 155),
    ("Each of 4 shelves holds 12 books. 9 books are taken away. How many books are on the shelves?", 39),
    ("Sam earns 10 dollars an hour and works 6 hours. He spends 25 dollars. How much is left?", 35),
    ("A class has 3 rows of 8 desks and 5 extra desks. How many desks are there?", 29),
    ("Mia had 50 dollars. She bought 2 shirts at 12 dollars each. How much money is left?", 26),
    ("A garden has 7 rows of 9 plants. 13 plants die. How many plants are alive?", 50),
    ("Jack has 3 times as many marbles as Amy, who has 14. How many marbles do they have together?", 56),
    ("A train has 6 cars with 40 seats each. 185 seats are taken. How many seats are empty?", 55),
    ("Eggs come in cartons of 12. A cook uses 5 cartons and has 7 eggs left over. How many eggs did he have?", 67),
    ("A pool holds 500 liters. It has 100 liters and fills 40 liters a minute. How many minutes to fill it?", 10),
    ("Zoe saves 6 dollars a week for 8 weeks, then spends 20 dollars. How much does she have?", 28),
    ("A pizza has 8 slices. 5 friends each eat 1 slice from each of 2 pizzas. How many slices are left?", 6),
)
