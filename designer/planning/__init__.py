"""Plan a survey: sample size, the smallest budget for a target accuracy, power, and a budget split over a
questionnaire (``docs/theory.md`` section 10)."""

from .sizes import (
    BASES,
    EPS_MAX,
    Accuracy,
    BudgetPlan,
    PlanningError,
    SampleSize,
    accuracy_of,
    check_by_simulation,
    power_at,
    power_sample_size,
    price_of_privacy,
    sample_size,
    smallest_budget,
)
from .survey import Allocation, Survey, allocate, joint_variance, load_survey, parse_survey

__all__ = ["BASES", "EPS_MAX", "Accuracy", "Allocation", "BudgetPlan", "PlanningError", "SampleSize", "Survey",
           "accuracy_of", "allocate", "check_by_simulation", "joint_variance", "load_survey", "parse_survey",
           "power_at", "power_sample_size", "price_of_privacy", "sample_size", "smallest_budget"]
