"""The demo gold set: Norwegian accounting glossary questions written for this project.

Citations follow NS 4102 (Norsk Standard kontoplan) and Norwegian laws. ``ITEMS`` are the gold
questions with expected answers; ``PASSAGES`` are a separate reference glossary, worded
differently, that the offline answerer retrieves from (with some terms no question asks about).
"""

from __future__ import annotations

SYSTEM = ("Du er en norsk regnskapsassistent. Svar kort og presist på bokmål, med kildehenvisning til "
          "NS 4102 eller lovparagraf i hakeparentes.")

NS = "[NS 4102]"
RSKL = "Lov om årsregnskap m.v.]"
# (file, task, domain, question, expected answer, must_include, citation_required)
ITEMS: list[tuple[str, str, str, str, str, list[str], bool]] = [
    ("accounting", "account_lookup", "accounting", "Hvilken konto i NS 4102 brukes for kundefordringer?",
     "Kundefordringer føres på konto 1500 i Norsk Standard kontoplan. Kontoen viser hva kundene skylder "
     f"virksomheten for varer og tjenester som er solgt på kreditt. {NS}", ["1500", "kundefordringer"], True),
    ("accounting", "account_lookup", "accounting", "Hvilken konto brukes for leverandørgjeld?",
     "Leverandørgjeld føres på konto 2400. Her registreres beløp virksomheten skylder leverandører for kjøp på "
     f"kreditt, og kontoen hører til kortsiktig gjeld i kontoklasse 2. {NS}", ["2400", "leverandører", "kortsiktig gjeld"], True),
    ("accounting", "account_lookup", "accounting", "Hvor føres bankinnskudd i standard kontoplan?",
     "Bankinnskudd føres på konto 1920 Bankinnskudd, som ligger i kontoklasse 1 blant omløpsmidlene sammen med "
     f"kontanter. {NS}", ["1920", "kontoklasse 1"], True),
    ("accounting", "account_lookup", "accounting", "Hva brukes konto 2700 til?",
     "Konto 2700 Utgående merverdiavgift viser avgiften virksomheten har beregnet på eget salg og skal betale "
     f"til staten. {NS}", ["utgående merverdiavgift", "salg"], True),
    ("accounting", "account_lookup", "accounting", "Hvilken kontoklasse i NS 4102 inneholder salgsinntekter?",
     "Kontoklasse 3 inneholder salgs- og driftsinntekter, for eksempel konto 3000 Salgsinntekt, avgiftspliktig.",
     ["kontoklasse 3", "3000"], False),
    ("accounting", "account_lookup", "accounting", "Hva er kontoklasse 2 i Norsk Standard kontoplan?",
     "Kontoklasse 2 omfatter egenkapital og gjeld: egenkapital i kontogruppe 20, avsetninger og langsiktig gjeld "
     f"i gruppe 21 og 22, og kortsiktig gjeld i gruppe 23 til 29. {NS}", ["egenkapital", "gjeld"], True),
    ("accounting", "account_lookup", "payroll", "Hvor føres skyldig forskuddstrekk?",
     "Skatt som er trukket i de ansattes lønn, men ikke betalt inn, føres på konto 2600 Forskuddstrekk. "
     f"Beløpet er kortsiktig gjeld til skattemyndighetene. {NS}", ["2600", "forskuddstrekk"], True),
    ("accounting", "account_lookup", "accounting", "Hvor føres avskrivninger i kontoplanen?",
     "Avskrivninger føres i kontogruppe 60 Av- og nedskrivninger, for eksempel konto 6000 for avskrivning på "
     f"bygninger og annen fast eiendom. {NS}", ["kontogruppe 60", "6000"], True),
    ("accounting", "account_lookup", "payroll", "Hvor føres feriepenger som ikke er utbetalt?",
     "Skyldige feriepenger føres på konto 2940 Skyldige feriepenger, som er kortsiktig gjeld til de ansatte "
     f"inntil feriepengene utbetales. {NS}", ["2940", "feriepenger"], True),
    ("accounting", "glossary_define", "accounting", "Hva er et bilag?",
     "Et bilag er dokumentasjonen av en bokført opplysning, for eksempel en faktura eller kvittering. Alle "
     "bokførte opplysninger skal være dokumentert på en måte som viser at de er berettiget. [§ 10 Lov om bokføring]",
     ["dokumentasjon", "bokført"], True),
    ("accounting", "glossary_define", "accounting", "Hvor lenge må regnskapsmateriale oppbevares?",
     "Primærdokumentasjon som bilag og spesifikasjoner skal oppbevares i fem år etter regnskapsårets slutt. "
     "[§ 13 Lov om bokføring]", ["fem år", "regnskapsårets slutt"], True),
    ("accounting", "glossary_define", "accounting", "Hva er bokføringsplikt?",
     "Den som har regnskapsplikt, har også bokføringsplikt: alle transaksjoner skal registreres fortløpende og "
     "dokumenteres slik at regnskapet kan kontrolleres. [Lov om bokføring]", ["regnskapsplikt", "dokumenteres"], True),
    ("reporting", "glossary_define", "reporting", "Hva inneholder et årsregnskap?",
     "Årsregnskapet består av resultatregnskap, balanse, kontantstrømoppstilling og noteopplysninger. Små "
     f"foretak kan unnlate kontantstrømoppstilling. [§ 3-2 {RSKL}", ["resultatregnskap", "balanse", "noteopplysninger"], True),
    ("reporting", "glossary_define", "reporting", "Hva er opptjeningsprinsippet?",
     "Opptjeningsprinsippet betyr at inntekt resultatføres når den er opptjent, normalt når varen eller tjenesten "
     f"er levert, og ikke når betalingen kommer. [§ 4-1 {RSKL}", ["inntekt", "opptjent", "levert"], True),
    ("reporting", "glossary_define", "reporting", "Hva sier sammenstillingsprinsippet?",
     "Sammenstillingsprinsippet krever at utgifter kostnadsføres i samme periode som de inntektene de hører "
     f"sammen med. [§ 4-1 {RSKL}", ["utgifter", "samme periode", "inntekt"], True),
    ("reporting", "glossary_define", "reporting", "Hva er forsiktighetsprinsippet?",
     "Forsiktighetsprinsippet innebærer at urealiserte tap skal resultatføres, mens urealiserte gevinster normalt "
     f"ikke inntektsføres før de er realisert. [§ 4-1 {RSKL}", ["urealiserte tap", "gevinst"], True),
    ("reporting", "glossary_define", "reporting", "Hva er forskjellen på anleggsmidler og omløpsmidler?",
     "Anleggsmidler er eiendeler bestemt til varig eie eller bruk for virksomheten. Alle andre eiendeler er "
     f"omløpsmidler, for eksempel varer, fordringer og bankinnskudd. [§ 5-1 {RSKL}", ["varig eie", "omløpsmidler"], True),
    ("reporting", "glossary_define", "reporting", "Når skal et driftsmiddel avskrives?",
     "Varige driftsmidler med begrenset økonomisk levetid skal avskrives etter en fornuftig avskrivningsplan over "
     f"levetiden. [§ 5-3 {RSKL}", ["begrenset", "avskrivningsplan", "levetid"], True),
    ("reporting", "glossary_define", "reporting", "Hvem har regnskapsplikt?",
     "Regnskapsplikt gjelder blant annet aksjeselskaper, allmennaksjeselskaper og andre foretak som loven nevner, "
     f"og innebærer plikt til å utarbeide årsregnskap. [§ 1-2 {RSKL}", ["aksjeselskaper", "årsregnskap"], True),
    ("payroll", "glossary_define", "payroll", "Hva er arbeidsgiveravgift?",
     "Arbeidsgiveravgift er en avgift arbeidsgiveren betaler til folketrygden, beregnet som en prosent av lønn og "
     "andre godtgjørelser til arbeidstakerne. Satsen avhenger av sonen virksomheten ligger i. "
     "[§ 23-2 Lov om folketrygd]", ["folketrygden", "lønn", "sone"], True),
    ("payroll", "glossary_define", "payroll", "Hvor mye feriepenger skal en arbeidstaker ha?",
     "Feriepenger utgjør minst 10,2 prosent av feriepengegrunnlaget, som er arbeidsvederlaget opptjent året før. "
     "Arbeidstakere over 60 år får 2,3 prosentpoeng mer. [§ 10 Lov om ferie]", ["10,2", "feriepengegrunnlaget"], True),
    ("payroll", "glossary_define", "payroll", "Hva er forskuddstrekk?",
     "Forskuddstrekk er skatt arbeidsgiveren trekker i lønnen etter skattekort eller tabell og betaler inn på vegne "
     "av arbeidstakeren. [§ 5-6 Lov om betaling og innkreving av skatte- og avgiftskrav]",
     ["arbeidsgiveren", "skattekort", "lønn"], True),
    ("payroll", "law_reference", "corporate", "Hvor stor må aksjekapitalen i et aksjeselskap være?",
     "Aksjekapitalen i et aksjeselskap må være minst 30 000 kroner. [§ 3-1 Lov om aksjeselskaper]", ["30 000"], True),
    ("payroll", "law_reference", "corporate", "Når kan et aksjeselskap dele ut utbytte?",
     "Utbytte kan bare deles ut fra fri egenkapital etter siste godkjente årsregnskap, og selskapet må ha "
     "forsvarlig egenkapital og likviditet etter utdelingen. [§ 8-1 Lov om aksjeselskaper]",
     ["fri egenkapital", "forsvarlig"], True),
]

# The reference glossary the offline answerer reads: (term, text).
PASSAGES: list[tuple[str, str]] = [
    ("Kundefordringer", "Konto 1500 Kundefordringer samler utestående beløp fra kunder som har kjøpt varer eller "
     f"tjenester på kreditt. Fordringen oppstår når fakturaen sendes og går ned når kunden betaler. {NS}"),
    ("Leverandørgjeld", "Konto 2400 Leverandørgjeld viser hva virksomheten skylder sine leverandører for innkjøp "
     f"som ennå ikke er betalt. Leverandørgjeld er kortsiktig gjeld. {NS}"),
    ("Bankinnskudd", "Konto 1920 Bankinnskudd brukes for penger på virksomhetens bankkontoer. Kontoen hører til "
     f"kontoklasse 1 Eiendeler, under betalingsmidler. {NS}"),
    ("Utgående merverdiavgift", "Konto 2700 Utgående merverdiavgift er gjeld til staten: avgiften som er lagt på "
     f"virksomhetens salg og som skal innberettes og betales. {NS}"),
    ("Inngående merverdiavgift", f"Konto 2710 Inngående merverdiavgift viser fradragsberettiget avgift på innkjøp. {NS}"),
    ("Salgsinntekt", "Kontoklasse 3 Salgs- og driftsinntekt brukes for inntekter fra salg av varer og tjenester; "
     f"konto 3000 er salgsinntekt som er avgiftspliktig. {NS}"),
    ("Kontoklasse 2", "Kontoklasse 2 Egenkapital og gjeld inneholder virksomhetens finansiering: egenkapital, "
     f"avsetninger for forpliktelser, langsiktig gjeld og kortsiktig gjeld. {NS}"),
    ("Egenkapital", f"Egenkapital er forskjellen mellom eiendeler og gjeld og føres i kontogruppe 20. {NS}"),
    ("Forskuddstrekk på konto 2600", "Konto 2600 Forskuddstrekk brukes for skatt som er trukket i lønn og som skal "
     f"betales videre til skatteoppkreveren. Kontoen er kortsiktig gjeld. {NS}"),
    ("Avskrivningskontoer", "Avskrivninger kostnadsføres i kontogruppe 60 Av- og nedskrivninger. Konto 6000 brukes "
     f"for avskrivning på bygninger og annen fast eiendom. {NS}"),
    ("Skyldige feriepenger", "Konto 2940 Skyldige feriepenger viser feriepenger de ansatte har opptjent, men ikke "
     f"fått utbetalt. Forpliktelsen er kortsiktig gjeld. {NS}"),
    ("Varelager", f"Konto 1460 Innkjøpte varer for videresalg brukes for varelageret. {NS}"),
    ("Bilag", "Bokførte opplysninger skal være dokumentert, for eksempel med faktura, kvittering eller kontrakt, "
     "slik at det går fram at de er berettiget. [§ 10 Lov om bokføring]"),
    ("Oppbevaring av regnskapsmateriale", "Regnskapsmateriale som primærdokumentasjon skal oppbevares i Norge i fem "
     "år etter regnskapsårets slutt. [§ 13 Lov om bokføring]"),
    ("Bokføringsplikt", "Alle som er regnskapspliktige, er også bokføringspliktige og må registrere og dokumentere "
     "transaksjonene sine. [Lov om bokføring]"),
    ("Årsregnskap", "Et årsregnskap skal ha resultatregnskap, balanse og noteopplysninger, og for større foretak "
     f"også kontantstrømoppstilling. [§ 3-2 {RSKL}"),
    ("Årsberetning", "Årsberetningen gir opplysninger om virksomhetens art og stilling; små foretak er unntatt. "
     "[Lov om årsregnskap m.v.]"),
    ("Opptjeningsprinsippet", "Etter opptjeningsprinsippet inntektsføres en transaksjon når inntekten er opptjent, "
     f"det vil si normalt ved levering av varen eller tjenesten. [§ 4-1 {RSKL}"),
    ("Sammenstillingsprinsippet", "Sammenstillingsprinsippet sier at utgifter skal kostnadsføres i samme periode som "
     f"tilhørende inntekt. [§ 4-1 {RSKL}"),
    ("Forsiktighetsprinsippet", "Forsiktighetsprinsippet betyr at urealiserte tap skal resultatføres, mens gevinster "
     f"først inntektsføres når de er realisert. [§ 4-1 {RSKL}"),
    ("Anleggsmidler og omløpsmidler", "Eiendeler bestemt til varig eie eller bruk i virksomheten klassifiseres som "
     f"anleggsmidler. Andre eiendeler er omløpsmidler. [§ 5-1 {RSKL}"),
    ("Avskrivningsplan", "Varige driftsmidler med begrenset økonomisk levetid skal avskrives etter en fornuftig "
     f"avskrivningsplan. [§ 5-3 {RSKL}"),
    ("Regnskapsplikt", "Regnskapsplikt betyr plikt til å utarbeide årsregnskap. Plikten gjelder blant annet "
     f"aksjeselskaper og allmennaksjeselskaper. [§ 1-2 {RSKL}"),
    ("Arbeidsgiveravgift", "Arbeidsgiveravgift betales av arbeidsgiveren til folketrygden og beregnes av lønn og "
     "annen godtgjørelse. Satsen varierer med sonen. [§ 23-2 Lov om folketrygd]"),
    ("Feriepenger", "Feriepengene er 10,2 prosent av feriepengegrunnlaget. For arbeidstakere over 60 år økes satsen "
     "med 2,3 prosentpoeng. [§ 10 Lov om ferie]"),
    ("Forskuddstrekk", "Arbeidsgiveren skal foreta forskuddstrekk i lønn etter arbeidstakerens skattekort og betale "
     "trekket inn til skattemyndighetene. [§ 5-6 Lov om betaling og innkreving av skatte- og avgiftskrav]"),
    ("Aksjekapital", "Aksjekapitalen i et aksjeselskap skal være minst 30 000 kroner. [§ 3-1 Lov om aksjeselskaper]"),
    ("Utbytte", "Selskapet kan bare dele ut utbytte så langt det har fri egenkapital etter siste årsregnskap, og det "
     "må ha forsvarlig egenkapital og likviditet. [§ 8-1 Lov om aksjeselskaper]"),
]
