"""Text pools of the generated corpus (testkit/corpora/generate.py): axes, sentences, off-topic subjects.

No pool sentence may look like an injection: tests/test_corpora_valid.py screens the generated corpus
and expects only the anchors to be flagged.
"""

from __future__ import annotations

__all__ = ["AXES", "AXIS_TEXT", "FILLER_TYPES", "OFF_TOPICS", "OFF_TYPES", "SENTENCES", "SUBJECTS"]

AXES = {
    "perf": "Performances et disponibilité",
    "cost": "Coût sur 3 ans",
    "sec": "Sécurité et conformité RGPD",
    "ops": "Exploitation et pérennité",
}
AXIS_TEXT = {
    "perf": "temps d'authentification au 95e centile, disponibilité mensuelle et tenue en charge lors des pics de connexion",
    "cost": "prix par utilisateur et par mois, support, intégration des applications et migration pour le nombre de comptes prévu",
    "sec": "vulnérabilités publiées et correctifs, authentification multifacteur, hébergement des données dans l'Union européenne",
    "ops": "effort d'exploitation, connecteurs, feuille de route, santé financière et avenir de chaque éditeur",
}
FILLER_TYPES = (
    "retour-experience",
    "article-specialise",
    "etude-de-cas",
    "billet-blog",
    "webinaire",
    "avis-utilisateur",
    "analyse-comparative",
    "documentation-technique",
)
OFF_TYPES = ("lettre-information", "affiche", "programme", "avis-travaux", "menu")

# Sentence pools. {p} product, {n}/{m} numbers, {k} a percentage. No pool sentence may look like an
# injection (tests/test_corpora_valid.py screens the generated corpus and expects only the anchors).
SUBJECTS = {
    "perf": [
        "tenue en charge lors de la rentrée",
        "temps d'authentification mesuré",
        "disponibilité sur douze mois",
        "pics de connexion du lundi matin",
    ],
    "cost": [
        "retour sur le coût de l'intégration",
        "licences et options",
        "coût de la migration des annuaires",
        "budget d'un déploiement régional",
    ],
    "sec": [
        "authentification multifacteur",
        "journalisation et audit des accès",
        "hébergement et sous-traitants",
        "gestion des sessions et des jetons",
    ],
    "ops": [
        "connecteurs et provisionnement",
        "montées de version",
        "effort d'administration",
        "feuille de route et communauté",
    ],
}
SENTENCES = {
    "perf": [
        "Sur notre parc de {n} comptes, {p} a absorbé un pic de {m} connexions par minute sans erreur.",
        "Le temps d'authentification observé reste sous {n} ms au 95e centile en dehors des pics.",
        "La disponibilité mesurée sur l'année atteint {k} %, maintenances planifiées exclues.",
        "Les connexions fédérées vers les applications métiers ajoutent en moyenne {n} ms.",
        "Un incident de {n} minutes a touché la page de connexion lors d'une mise à jour de certificat.",
        "La réplication entre deux centres de données bascule en moins de {n} secondes lors des essais.",
    ],
    "cost": [
        "L'intégration de {n} applications a demandé {m} jours de prestation.",
        "Le support premium représente {k} % du prix de l'abonnement.",
        "La migration de l'ancien annuaire a coûté {n} 000 EUR, formation comprise.",
        "Une remise de {k} % a été obtenue pour un engagement de trois ans.",
        "Le coût par utilisateur baisse au-delà de {n} 000 comptes selon la grille de l'éditeur.",
        "Les connecteurs spécifiques sont facturés à part, {n} EUR par mois chacun.",
    ],
    "sec": [
        "L'authentification multifacteur est activée pour {k} % des comptes après {n} mois.",
        "Les journaux d'accès sont conservés {n} jours puis archivés.",
        "Les données d'identité restent hébergées dans l'Union européenne, avec {n} sous-traitants déclarés.",
        "Le test d'intrusion annuel n'a relevé aucune faille critique et {n} points mineurs.",
        "Les clés de signature des jetons tournent tous les {n} jours.",
        "Le délégué à la protection des données a validé l'analyse d'impact en {n} semaines.",
    ],
    "ops": [
        "L'administration quotidienne mobilise {n} dixièmes d'ETP.",
        "Les montées de version trimestrielles prennent {n} heures, tests compris.",
        "Le provisionnement automatique couvre {n} applications sur {m}.",
        "La communauté d'utilisateurs compte {n} membres actifs et un forum animé.",
        "L'éditeur publie une feuille de route à {n} mois et la tient globalement.",
        "Le catalogue propose {m} connecteurs prêts à l'emploi.",
    ],
}
OFF_TOPICS = [
    (
        "Tournoi de pétanque inter-services",
        [
            "Le tournoi réunit {n} équipes de trois joueurs sur le terrain du parc.",
            "Les inscriptions sont ouvertes jusqu'au {n} du mois.",
            "Un barbecue est prévu à midi, {m} repas sont commandés.",
            "La coupe sera remise par le comité des fêtes.",
        ],
    ),
    (
        "Travaux de réfection de la toiture du bâtiment B",
        [
            "Les travaux durent {n} semaines et commencent un lundi.",
            "L'accès au parking nord sera limité à {m} places.",
            "Les bureaux du dernier étage seront déplacés au rez-de-chaussée.",
            "Une nacelle sera installée côté cour pendant la durée du chantier.",
        ],
    ),
    (
        "Collecte de sang dans le hall d'accueil",
        [
            "L'établissement du sang accueille les donneurs de 9 h à 16 h.",
            "Chaque don prend environ {n} minutes, collation comprise.",
            "La dernière collecte a réuni {m} donneurs.",
            "Pensez à bien manger avant de venir.",
        ],
    ),
    (
        "Menu de la cantine de la semaine",
        [
            "Le lundi, blanquette de veau et riz pilaf.",
            "Le plat végétarien du jour coûte {n} EUR.",
            "Le mercredi, poisson du marché et légumes de saison.",
            "La cantine sert {m} repas par jour en moyenne.",
        ],
    ),
    (
        "Bibliothèque interne : nouveautés du mois",
        [
            "La bibliothèque accueille {n} nouveaux romans et {m} bandes dessinées.",
            "Le prêt dure trois semaines, renouvelable une fois.",
            "Un club de lecture se réunit le jeudi midi.",
            "Les suggestions d'achat sont les bienvenues.",
        ],
    ),
    (
        "Plan de chauffage pour l'hiver",
        [
            "La température de consigne des bureaux est fixée à {n} degrés.",
            "Le chauffage est réduit le week-end et la nuit.",
            "Les radiateurs défectueux sont signalés au service technique.",
            "La consommation a baissé de {n} % l'an dernier.",
        ],
    ),
]
